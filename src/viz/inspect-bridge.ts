/** Stately's hosted inspector UI, the page `@statelyai/inspect` 0.7.2's browser inspector opens. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';

/** The WebSocket path the bridge page listens on; qmd processes connect to any other path. */
export const VIEWER_PATH = '/viewer';

/**
 * The page `qmd lifecycle inspect` serves at `/`. Stately's inspector UI is a web page that
 * takes inspection messages through `window.postMessage` and answers
 * `{ type: '@statelyai.connected' }` once it listens (as `createBrowserInspector` and
 * `@statelyai/inspect/server`'s bridge page rely on); it has no WebSocket endpoint of its own.
 * So this page embeds it in an iframe, reads the relay's `/viewer` socket, holds messages until
 * the inspector says it is connected, then posts each one. Written after `@statelyai/inspect`
 * 0.7.2's `server.mjs` bridge, with the socket URL taken from the page's own address.
 */
export function bridgePage(inspectorUrl = STATELY_INSPECTOR_URL): string {
  // `<` escaped so a URL can never close the script element.
  const src = JSON.stringify(inspectorUrl).replace(/</g, '\\u003c');
  return `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>qmd lifecycle inspector</title>
<style>
  html, body { height: 100%; margin: 0; font: 13px system-ui, sans-serif; }
  body { display: flex; flex-direction: column; }
  #status { padding: 4px 8px; background: #f3f3f3; border-bottom: 1px solid #ddd; }
  iframe { flex: 1; width: 100%; border: 0; }
</style>
</head>
<body>
<div id="status">qmd lifecycle inspector: connecting…</div>
<iframe id="inspector"></iframe>
<script>
  const inspectorUrl = ${src};
  const iframe = document.getElementById('inspector');
  const status = document.getElementById('status');
  const held = [];
  let ready = false;
  let count = 0;
  const show = (text) => { status.textContent = 'qmd lifecycle inspector: ' + text; };
  window.addEventListener('message', (e) => {
    if (e.source !== iframe.contentWindow || !e.data || e.data.type !== '@statelyai.connected') return;
    ready = true;
    for (const data of held.splice(0)) iframe.contentWindow.postMessage(data, '*');
  });
  iframe.src = inspectorUrl;
  const protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(protocol + '//' + location.host + ${JSON.stringify(VIEWER_PATH)});
  ws.onopen = () => show('waiting for qmd processes (QMD_INSPECT=' + protocol + '//' + location.host + ')');
  ws.onclose = () => show('the relay closed; reload to reconnect');
  ws.onmessage = (event) => {
    let data;
    try { data = JSON.parse(event.data); } catch { return; }
    count++;
    show(count + ' message(s) received');
    if (ready) iframe.contentWindow.postMessage(data, '*');
    else held.push(data);
  };
</script>
</body>
</html>
`;
}
