extension Assets {
    /// The page's script: loads the state, shows it as `homectl accessories` does,
    /// follows the event stream by seq, and sends writes. `window.homedWeb` keeps what
    /// the tests and the benchmark read: every seq received (`seqs`) and when each
    /// event's change reached the DOM (`applied`, ms since the epoch from
    /// performance.timeOrigin + performance.now()), and homed's time of each value
    /// event (`eventMs`).
    static let appJS = #"""
        'use strict';
        const web = window.homedWeb = { state: null, lastSeq: 0, journal: '', seqs: [], applied: {}, source: null, statusLog: [], opened: [], eventMs: {} };
        const $ = (selector, root = document) => root.querySelector(selector);
        const el = (tag, attributes = {}, ...children) => {
          const node = document.createElement(tag);
          for (const [key, value] of Object.entries(attributes)) {
            if (key === 'text') node.textContent = value;
            else if (value !== false && value !== undefined && value !== null) node.setAttribute(key, value === true ? '' : value);
          }
          for (const child of children) if (child) node.append(child);
          return node;
        };
        const units = { celsius: ' °C', percentage: '%', arcdegrees: '°', lux: ' lx', seconds: ' s' };
        const stateTypes = ['On', 'Active', 'CurrentTemperature', 'LockCurrentState', 'CurrentDoorState', 'CurrentPosition',
          'SecuritySystemCurrentState', 'ContactSensorState', 'MotionDetected', 'OccupancyDetected', 'LeakDetected',
          'SmokeDetected', 'CarbonMonoxideDetected', 'CurrentRelativeHumidity', 'CurrentAmbientLightLevel', 'AirQuality'];
        const noControl = new Set(['Name', 'Identify', 'ConfiguredName']);

        // A value as homectl shows it: the person's name of an enumerated value, else
        // the value with its unit; "no value yet" before anything reported one.
        function display(c) {
          if (c.value === null || c.value === undefined) return 'no value yet';
          if (c.names && c.names[String(c.value)] !== undefined) return c.names[String(c.value)];
          let text = String(c.value);
          if (c.format === 'float' && typeof c.value === 'number' && Number.isInteger(c.value)) text = c.value.toFixed(1);
          if (c.format === 'bool') text = c.value ? 'true' : 'false';
          return text + (units[c.unit] || '');
        }
        // "CurrentHeatingCoolingState" → "Current heating cooling state", as homectl spaces names.
        const spaced = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/ ([A-Z])(?=[a-z])/g, (m, c) => ' ' + c.toLowerCase());
        const chars = (ids) => ids.map((id) => web.state.characteristics[id]).filter(Boolean);
        function ago(ms) {
          const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
          return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
        }
        function visibleServices(accessory) {
          return accessory.services.filter((s) => s.type !== 'AccessoryInformation' && !s.hidden);
        }
        // What homectl accessories shows in its STATE column (Sources/homectl/Output/PrimaryState.swift).
        function primaryState(accessory) {
          if (!accessory.reachable) return 'unreachable';
          const services = visibleServices(accessory);
          const service = services.find((s) => s.primary) || services[0];
          if (!service) return '-';
          if (service.type === 'StatelessProgrammableSwitch') {
            const buttons = services.filter((s) => s.type === 'StatelessProgrammableSwitch');
            let last = null;
            for (const button of buttons) for (const c of chars(button.characteristics))
              if (c.type === 'ProgrammableSwitchEvent' && c.value !== null && c.updatedMs > 0 && (!last || c.updatedMs > last.c.updatedMs)) last = { button, c };
            if (!last) return '-';
            return (buttons.length > 1 ? last.button.name + ': ' : '') + display(last.c) + ', ' + ago(last.c.updatedMs);
          }
          const list = chars(service.characteristics).filter((c) => c.readable);
          const named = (type) => list.find((c) => c.type === type);
          let main = null;
          for (const type of stateTypes) { main = named(type); if (main) break; }
          main = main || list.find((c) => c.type !== 'Name' && c.value !== null) || list.find((c) => c.type !== 'Name');
          if (!main) return '-';
          if (main.value === null) return 'no value yet';
          let text = main.format === 'bool' ? (main.type === 'On' ? (main.value ? 'On' : 'Off') : `${main.type}: ${main.value ? 'yes' : 'no'}`) : display(main);
          const brightness = named('Brightness');
          if (main.type === 'On' && main.value === true && brightness) text += ', ' + display(brightness);
          return text;
        }

        function message(text, ok = false) {
          const p = el('p', { class: ok ? 'ok' : '', text });
          $('#messages').prepend(p);
          while ($('#messages').children.length > 4) $('#messages').lastChild.remove();
          setTimeout(() => p.remove(), ok ? 3000 : 15000);
        }
        function setStatus(state, reason = '') {
          const badge = $('#status');
          badge.dataset.state = state;
          badge.textContent = state.replace('-', ' ');
          badge.title = reason;
          web.statusLog.push(state);
        }
        const canWrite = () => web.state.role !== 'viewer';

        async function post(path, body) {
          const response = await fetch(path, {
            method: 'POST', credentials: 'same-origin',
            headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': web.state.csrf },
            body: JSON.stringify(body),
          });
          const answer = await response.json().catch(() => ({ message: `HTTP ${response.status}` }));
          if (!response.ok) throw new Error(answer.message || `HTTP ${response.status}`);
          return answer;
        }

        // A write is shown as done only once homed answered (through the provider);
        // a refusal shows homed's message and the control goes back to the value held.
        async function write(c, value, control) {
          const card = control.closest('.accessory');
          control.disabled = true;
          card.classList.add('pending');
          $('.error', card).textContent = '';
          try {
            const answer = await post('/api/write', { id: c.id, value });
            card.dataset.ackSeq = answer.seq;
          } catch (error) {
            $('.error', card).textContent = error.message;
            message(error.message);
            updateCharacteristic(c.id);
          } finally {
            control.disabled = false;
            card.classList.remove('pending');
          }
        }

        function control(c) {
          if (!canWrite() || !c.writable || noControl.has(c.type)) return null;
          if (c.format === 'bool') {
            const button = el('button', { class: 'toggle', type: 'button', 'data-write': c.id, 'aria-pressed': String(c.value === true) });
            button.textContent = c.value === true ? 'On' : 'Off';
            button.addEventListener('click', () => write(c, !(web.state.characteristics[c.id].value === true), button));
            return button;
          }
          if (c.names) {
            const select = el('select', { 'data-write': c.id });
            if (c.value === null) select.append(el('option', { value: '', text: 'no value yet' }));
            for (const [value, name] of Object.entries(c.names)) select.append(el('option', { value, text: name }));
            select.value = c.value === null ? '' : String(c.value);
            select.addEventListener('change', () => write(c, Number(select.value), select));
            return select;
          }
          if (['uint8', 'uint16', 'uint32', 'uint64', 'int', 'float'].includes(c.format) && c.min !== undefined && c.max !== undefined) {
            const input = el('input', { type: 'range', 'data-write': c.id, min: c.min, max: c.max, step: c.step || (c.format === 'float' ? 0.1 : 1) });
            input.value = c.value === null ? c.min : c.value;
            input.addEventListener('change', () => write(c, Number(input.value), input));
            return input;
          }
          return null;
        }

        function characteristicRow(c) {
          const row = el('div', { class: 'char', 'data-char': c.id, 'data-type': c.type },
            el('span', { class: 'name', text: spaced(c.type) }),
            el('span', { class: 'value', 'data-value': c.id, text: display(c) }));
          const input = control(c);
          if (input) row.append(input);
          if (c.readable && ['uint8', 'uint16', 'uint32', 'uint64', 'int', 'float'].includes(c.format) && !c.names) {
            const button = el('button', { class: 'chart', type: 'button', title: 'History of the last 24 hours', text: 'history' });
            button.addEventListener('click', () => chart(c));
            row.append(button);
          }
          return row;
        }

        function accessoryCard(accessory) {
          const card = el('article', { class: 'accessory' + (accessory.reachable ? '' : ' unreachable'), 'data-accessory': accessory.id },
            el('h3', { text: accessory.name }),
            el('p', { class: 'state', 'data-state': accessory.id, text: primaryState(accessory) }),
            el('p', { class: 'error' }));
          for (const service of visibleServices(accessory))
            for (const c of chars(service.characteristics)) if ((c.readable || (c.writable && canWrite())) && !c.hidden && c.type !== 'Name') card.append(characteristicRow(c));
          return card;
        }

        function render() {
          const s = web.state;
          const home = s.homes.find((h) => h.primary) || s.homes[0];
          $('#title').textContent = home ? home.name : 'Home';
          document.title = home ? home.name : 'Home';
          $('#who').textContent = s.login ? `${s.user} · ${s.role}` : s.role;
          $('#logout').hidden = !s.login;
          const homes = $('#homes');
          homes.replaceChildren();
          for (const h of s.homes) {
            for (const room of h.rooms) {
              if (!room.accessories.length) continue;
              const grid = el('div', { class: 'accessories' });
              for (const id of room.accessories) if (s.accessories[id]) grid.append(accessoryCard(s.accessories[id]));
              homes.append(el('section', { class: 'room', 'data-room': room.id }, el('h2', { text: room.name }), grid));
            }
          }
          const scenes = s.homes.flatMap((h) => h.scenes);
          $('#scenes-section').hidden = !scenes.length;
          $('#scenes').replaceChildren(...scenes.map((scene) => {
            if (!canWrite()) return el('span', { class: 'scene', text: scene.name + ' ' });
            const button = el('button', { type: 'button', 'data-scene': scene.id, text: scene.name });
            button.addEventListener('click', async () => {
              button.disabled = true;
              try {
                const answer = await post('/api/scene', { id: scene.id });
                if (answer.failed.length) message(answer.failed.map((f) => f.message).join('; '));
                else message(`${scene.name}: done`, true);
              } catch (error) { message(error.message); } finally { button.disabled = false; }
            });
            return button;
          }));
          $('#providers').replaceChildren(...s.providers.map((p) => el('li', {
            'data-provider': p.id,
            text: `${p.id}: ${p.connected ? 'connected' : 'not connected'}, ${p.accessories} accessories` +
              (p.requests ? `, ${p.requests} requests, p50 ${(p.p50Us / 1000).toFixed(1)} ms, p99 ${(p.p99Us / 1000).toFixed(1)} ms` : ''),
          })));
        }

        function updateCharacteristic(id) {
          const c = web.state.characteristics[id];
          if (!c) return;
          const value = $(`[data-value="${id}"]`);
          if (value) value.textContent = display(c);
          const input = $(`[data-write="${id}"]`);
          if (input && input.tagName === 'BUTTON') { input.setAttribute('aria-pressed', String(c.value === true)); input.textContent = c.value === true ? 'On' : 'Off'; }
          else if (input && document.activeElement !== input) input.value = c.value === null ? '' : String(c.value);
          updateAccessory(c.accessory);
        }
        function updateAccessory(id) {
          const accessory = web.state.accessories[id];
          const card = $(`[data-accessory="${id}"]`);
          if (!accessory || !card) return;
          card.classList.toggle('unreachable', !accessory.reachable);
          $('.state', card).textContent = primaryState(accessory);
        }

        function received(event) {
          const data = JSON.parse(event.data);
          const seq = Number(event.lastEventId || data.seq);
          web.seqs.push(seq);
          if (seq <= web.lastSeq) return null;  // never applied twice
          web.lastSeq = seq;
          return data;
        }
        const stamp = (seq) => { web.applied[seq] = performance.timeOrigin + performance.now(); };

        function openStream(since) {
          if (web.source) web.source.close();
          web.opened.push(since);
          const source = web.source = new EventSource(`/api/events?journal=${encodeURIComponent(web.journal)}&since=${since}`);
          source.addEventListener('value', (event) => {
            const data = received(event);
            if (!data) return;
            const c = web.state.characteristics[data.id];
            if (c) { c.value = data.value; c.updatedMs = data.timeMs; updateCharacteristic(data.id); }
            stamp(data.seq);
            web.eventMs[data.seq] = data.timeMs;
          });
          source.addEventListener('reachability', (event) => {
            const data = received(event);
            if (!data) return;
            const accessory = web.state.accessories[data.accessory];
            if (accessory) { accessory.reachable = data.reachable; updateAccessory(data.accessory); }
            stamp(data.seq);
          });
          // A layout change (an accessory added, renamed, moved): the state again, from its seq on.
          source.addEventListener('layout', (event) => { if (received(event)) { stamp(web.lastSeq); reload(); } });
          source.addEventListener('scene', (event) => { if (received(event)) stamp(web.lastSeq); });
          source.addEventListener('other', (event) => { if (received(event)) stamp(web.lastSeq); });
          source.addEventListener('status', (event) => { const data = JSON.parse(event.data); setStatus(data.state, data.reason); });
          // homed could not say what was missed: the whole state again, never a gap.
          source.addEventListener('resync', () => { source.close(); setStatus('reloading'); reload(); });
          source.addEventListener('failure', (event) => { source.close(); const data = JSON.parse(event.data); setStatus('offline', data.message); message(data.message); });
          source.onerror = () => {
            if (source.readyState === EventSource.CLOSED) {
              // The browser gives up on a refused stream (homed-web down, at its limit): try again from where we are.
              setStatus('offline');
              setTimeout(() => { if (web.source === source) openStream(web.lastSeq); }, 1000);
            } else {
              setStatus('catching-up', 'reconnecting to homed-web');
            }
          };
        }

        async function reload() {
          web.loading = true;
          let response;
          try { response = await fetch('/api/home', { credentials: 'same-origin' }); } catch (error) { response = null; }
          if (response && response.status === 401) { location.reload(); return; }
          if (!response || !response.ok) {
            const answer = response ? await response.json().catch(() => ({})) : {};
            setStatus('offline', answer.message || 'homed-web does not answer');
            setTimeout(reload, 1000);
            return;
          }
          web.state = await response.json();
          web.journal = web.state.journal;
          web.lastSeq = web.state.seq;
          render();
          web.loading = false;
          openStream(web.state.seq);
        }

        async function chart(c) {
          $('#chart-section').hidden = false;
          const accessory = web.state.accessories[c.accessory];
          $('#chart-title').textContent = `${accessory ? accessory.name : ''} ${spaced(c.type)}: last 24 h`;
          const response = await fetch(`/api/history?id=${c.id}&hours=24`, { credentials: 'same-origin' });
          const answer = await response.json();
          if (!response.ok) { $('#chart').textContent = answer.message; return; }
          const points = answer.rollups.filter((p) => p.count > 0);
          if (!points.length) { $('#chart').textContent = 'No changes in the last 24 hours.'; return; }
          const lo = Math.min(...points.map((p) => p.min)), hi = Math.max(...points.map((p) => p.max));
          const x = (ms) => ((ms - answer.sinceMs) / (answer.untilMs - answer.sinceMs)) * 400;
          const y = (v) => 95 - (hi === lo ? 45 : ((v - lo) / (hi - lo)) * 90);
          const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
          svg.setAttribute('viewBox', '0 0 400 100');
          const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
          line.setAttribute('points', points.map((p) => `${x(p.startMs + answer.widthMs / 2).toFixed(1)},${y(p.mean).toFixed(1)}`).join(' '));
          svg.append(line);
          const label = el('p', { text: `min ${lo}, max ${hi}${units[c.unit] || ''}` });
          $('#chart').replaceChildren(svg, label);
        }

        reload();

        """#
}
