internal import Foundation

/// The page: plain HTML, CSS and a little JavaScript, served from the binary, so
/// there is no build step and nothing to fetch (and the page loads nothing from
/// anywhere else: the Content-Security-Policy says so).
enum Assets {
    static let indexHTML = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Home</title>
        <link rel="stylesheet" href="/app.css">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <header>
          <h1 id="title">Home</h1>
          <span id="status" data-state="connecting">connecting</span>
          <span id="who"></span>
          <form id="logout" method="post" action="/logout" hidden><button type="submit">Log out</button></form>
        </header>
        <div id="messages" role="status" aria-live="polite"></div>
        <main id="homes"></main>
        <section id="scenes-section" hidden><h2>Scenes</h2><div id="scenes"></div></section>
        <section id="chart-section" hidden><h2 id="chart-title">History</h2><div id="chart"></div></section>
        <section id="providers-section"><h2>Providers</h2><ul id="providers"></ul></section>
        </body>
        </html>

        """#

    static func loginHTML(message: String) -> String {
        let escaped = message.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        return #"""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Home: log in</title>
            <link rel="stylesheet" href="/app.css">
            </head>
            <body class="login">
            <form method="post" action="/login" id="login">
              <h1>Home</h1>
              <p class="error">\#(escaped)</p>
              <label>Name <input name="name" autocomplete="username" required autofocus></label>
              <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
              <button type="submit">Log in</button>
            </form>
            </body>
            </html>

            """#
    }
}
