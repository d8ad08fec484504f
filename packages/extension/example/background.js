// The service worker: rechecks access before the signed answer runs out (an alarm, so it
// happens even after the browser stopped this worker), answers the content scripts, and
// shows the state on the toolbar button.
import { config } from "./config.js";
import { createWarden } from "./warden/index.js";

const warden = createWarden(config);
// Synchronously, at the top level: the alarm that woke a stopped worker reaches only listeners added in its first turn.
warden.startBackground();

const badge = (state) => {
  chrome.action.setBadgeText({ text: state.entitled ? "PRO" : state.signedIn ? "" : "?" });
  chrome.action.setBadgeBackgroundColor({ color: state.entitled ? "#1a7f37" : "#6e7781" });
};
warden.onAccessChange(badge);
warden.access().then(badge, () => {});
