extension Assets {
    static let appCSS = #"""
        :root { --fg: #1d1d1f; --muted: #6e6e73; --card: #fff; --bg: #f2f2f7; --accent: #0a84ff; --bad: #c0392b; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.4 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
        header { display: flex; gap: 1em; align-items: center; padding: .6em 1em; background: var(--card);
          border-bottom: 1px solid #ddd; position: sticky; top: 0; z-index: 1; }
        header h1 { font-size: 1.2em; margin: 0; flex: 1; }
        #status { font-size: .8em; padding: .15em .6em; border-radius: 1em; background: #ddd; }
        #status[data-state="live"] { background: #d4f5dc; color: #17692c; }
        #status[data-state="catching-up"], #status[data-state="reloading"] { background: #fff1c2; color: #7a5a00; }
        #status[data-state="offline"] { background: #f8d3cf; color: var(--bad); }
        #who { color: var(--muted); font-size: .85em; }
        main, section { padding: 0 1em; }
        h2 { font-size: 1em; color: var(--muted); margin: 1.2em 0 .4em; text-transform: uppercase; letter-spacing: .04em; }
        .accessories { display: grid; grid-template-columns: repeat(auto-fill, minmax(15em, 1fr)); gap: .6em; }
        .accessory { background: var(--card); border-radius: .7em; padding: .7em .8em; box-shadow: 0 1px 2px #0001; }
        .accessory h3 { font-size: 1em; margin: 0; }
        .accessory .state { margin: .1em 0 .4em; color: var(--muted); }
        .accessory.unreachable { opacity: .6; }
        .accessory.unreachable .state { color: var(--bad); }
        .accessory.pending { outline: 2px dashed var(--accent); }
        .char { display: flex; flex-wrap: wrap; gap: .4em; align-items: center; font-size: .85em; min-height: 1.8em; }
        .char select { max-width: 100%; }
        .char .name { flex: 1; color: var(--muted); }
        .char input[type=range] { width: 7em; }
        .char button.chart { border: 0; background: none; color: var(--accent); cursor: pointer; padding: 0 .2em; font-size: .85em; }
        button.toggle { min-width: 3.5em; border-radius: 1em; border: 1px solid #ccc; background: #eee; cursor: pointer; }
        button.toggle[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
        .error { color: var(--bad); font-size: .85em; min-height: 0; margin: 0; }
        #messages { padding: 0 1em; }
        #messages p { margin: .4em 0; padding: .4em .6em; border-radius: .4em; background: #f8d3cf; color: var(--bad); }
        #messages p.ok { background: #d4f5dc; color: #17692c; }
        #scenes button { margin: 0 .4em .4em 0; padding: .4em .9em; border-radius: 1em; border: 1px solid #ccc; background: var(--card); cursor: pointer; }
        #providers { padding-left: 1.2em; font-size: .9em; }
        #chart svg { background: var(--card); border-radius: .5em; width: 100%; max-width: 40em; height: 10em; }
        #chart polyline { fill: none; stroke: var(--accent); stroke-width: 2; }
        body.login { display: grid; place-items: center; min-height: 100vh; }
        #login { background: var(--card); padding: 1.5em; border-radius: .8em; display: grid; gap: .7em; min-width: 18em; }
        #login label { display: grid; gap: .2em; }

        """#
}
