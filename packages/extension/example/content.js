// A content script is a classic script: it loads the library with a dynamic import of the
// extension's own files (listed in web_accessible_resources). It never calls Warden
// itself: the library reads the shared storage and asks the service worker.
(async () => {
  const { createWarden } = await import(chrome.runtime.getURL("warden/index.js"));
  const { config } = await import(chrome.runtime.getURL("config.js"));
  const warden = createWarden(config);

  const host = document.createElement("div");
  host.id = "tabmaster-warden-example";
  const shadow = host.attachShadow({ mode: "closed" });
  const badge = document.createElement("div");
  badge.setAttribute(
    "style",
    "position:fixed;right:12px;bottom:12px;z-index:2147483647;font:600 12px/1 system-ui,sans-serif;padding:8px 10px;border-radius:999px;color:#fff;box-shadow:0 1px 4px rgba(0,0,0,.25)",
  );
  shadow.append(badge);
  document.documentElement.append(host);

  const show = (state) => {
    host.dataset.entitled = String(state.entitled);
    badge.textContent = state.entitled ? "Tab Master Pro: on" : state.signedIn ? "Tab Master: locked" : "Tab Master: signed out";
    badge.style.background = state.entitled ? "#1a7f37" : "#57606a";
  };
  warden.onAccessChange(show);
  show(await warden.access());
})();
