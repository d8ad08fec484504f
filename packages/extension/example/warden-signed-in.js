// The page Warden's sign-in page comes back to when the browser has no chrome.identity
// (the library's callbackPage, listed in web_accessible_resources): it signs this
// extension in with the one-time code in its address, then says so.
import { config } from "./config.js";
import { createWarden } from "./warden/index.js";

const warden = createWarden(config);
const message = document.getElementById("message");
warden.completeSignIn().then(
  (signed) => {
    message.textContent = `Signed in as ${signed.email}. You can close this tab.`;
    // The code is spent: keep it out of the tab's history.
    history.replaceState(null, "", location.pathname);
  },
  (error) => {
    message.textContent = `Not signed in: ${error.message}`;
  },
);
