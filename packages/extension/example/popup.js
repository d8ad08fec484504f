// The popup: sign-in in two steps, the access state as it changes, and the person's actions.
import { config } from "./config.js";
import { createWarden, UsageLimitError } from "./warden/index.js";

const warden = createWarden(config);
const $ = (id) => document.getElementById(id);

function showError(error) {
  $("error").hidden = !error;
  $("error").textContent = error ? error.message : "";
}

/** Runs a button's action with the button disabled; shows what went wrong. */
async function run(button, action) {
  button.disabled = true;
  showError(null);
  try {
    await action();
  } catch (error) {
    showError(error);
  } finally {
    button.disabled = false;
  }
}

const day = (iso) => new Date(iso).toLocaleDateString();

/** What is left of the meter: the allowance this period, the credits, and when the allowance resets. */
function showUsage(usage) {
  const parts = [`${usage.remaining} ${usage.unit} left: ${usage.allowance_remaining} of ${usage.allowance} this period, ${usage.credits} credits.`];
  if (usage.resets_at !== null) parts.push(`Resets ${day(usage.resets_at)}.`);
  $("usage").textContent = parts.join(" ");
}

/** The meter's line, read again at each access change (a credit pack bought changes the answer's version). A device activated with a key has no meters of its own. */
async function renderUsage(state) {
  $("usage-box").hidden = !config.meter || state.email === null;
  if ($("usage-box").hidden) return;
  try {
    showUsage(await warden.usage(config.meter));
  } catch (error) {
    showError(error);
  }
}

const VIA = { licence: "a licence", subscription: "a subscription", trial: "the trial", grant: "a grant" };
const time = (ms) => new Date(ms).toLocaleTimeString();

async function render(state) {
  const pending = state.signedIn ? null : await warden.pendingEmail();
  $("signed-out").hidden = state.signedIn || pending !== null;
  $("code").hidden = state.signedIn || pending === null;
  $("signed-in").hidden = !state.signedIn;
  $("code-email").textContent = pending ?? "";

  const status = $("status");
  status.className = `pill ${state.signedIn ? (state.entitled ? "unlocked" : "locked") : ""}`;
  status.textContent = state.signedIn ? (state.entitled ? "Unlocked" : "Locked") : "Signed out";
  document.body.dataset.state = state.signedIn ? (state.entitled ? "unlocked" : "locked") : pending ? "code" : "signed-out";
  if (!state.signedIn) return;

  $("who-line").replaceChildren(
    ...(state.email ? ["Signed in as ", Object.assign(document.createElement("strong"), { textContent: state.email })] : ["Activated with a licence key"]),
  );
  const parts = [];
  if (state.entitled) parts.push(`Pro features on, by ${VIA[state.via] ?? state.via}${state.plan ? ` (${state.plan})` : ""}.`);
  else parts.push("Pro features are locked.");
  if (state.trialEndsAt !== null) parts.push(`Trial ${state.trialEndsAt > Date.now() ? "ends" : "ended"} ${new Date(state.trialEndsAt).toLocaleDateString()}.`);
  if (state.offline) parts.push(state.expiresAt === null ? "Warden cannot be reached." : `Offline: kept until ${time(state.expiresAt)}.`);
  else if (state.expiresAt !== null) parts.push(`Checked; good until ${time(state.expiresAt)}.`);
  $("detail").textContent = parts.join(" ");
  $("trial").hidden = state.entitled;
  $("buy").hidden = state.entitled;
  $("open-trial").hidden = state.entitled;
  await renderUsage(state);
}

$("email-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run(event.submitter, async () => {
    await warden.signIn($("email").value);
    await render(await warden.access());
  });
});

$("code-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run(event.submitter, async () => {
    await warden.verify($("code-input").value.trim());
    $("code-input").value = "";
    await render(await warden.access());
  });
});

$("other-email").addEventListener("click", (event) =>
  run(event.target, async () => {
    await warden.signOut();
    await render(await warden.access());
  }),
);

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run(event.submitter, async () => {
    await warden.activate($("key").value.trim());
    $("key").value = "";
    await render(await warden.access());
  });
});

$("recheck").addEventListener("click", (event) => run(event.target, async () => render(await warden.access({ fresh: true }))));
$("use-one").addEventListener("click", (event) =>
  run(event.target, async () => {
    try {
      showUsage(await warden.spend(config.meter));
    } catch (error) {
      if (!(error instanceof UsageLimitError)) throw error;
      // Refused, nothing spent: what is left, and when the allowance comes back.
      showUsage(error.usage);
      const { unit, resets_at } = error.usage;
      throw new Error(`No ${unit} left to use.${resets_at === null ? "" : ` The allowance resets ${day(resets_at)}.`} Credits are on the Plans page.`);
    }
  }),
);
$("trial").addEventListener("click", (event) => run(event.target, () => warden.startTrial()));
$("buy").addEventListener("click", (event) =>
  run(event.target, async () => {
    const url = await warden.checkout("lifetime");
    await chrome.tabs.create({ url });
  }),
);
// Warden's hosted pages: the library opens them for this person (a page ticket: the page
// asks "Continue as …?" unless the browser is signed in there already) and, while it is
// open, waits on Warden for the change, so the popup unlocks with no click.
$("open-sign-in").addEventListener("click", (event) => run(event.target, () => warden.openSignInPage()));
$("open-plans").addEventListener("click", (event) => run(event.target, () => warden.openPaymentPage()));
$("open-trial").addEventListener("click", (event) => run(event.target, () => warden.openTrialPage()));
$("open-manage").addEventListener("click", (event) => run(event.target, () => warden.openManagePage()));
$("sign-out").addEventListener("click", (event) => run(event.target, () => warden.signOut()));
$("devices-box").addEventListener("toggle", async (event) => {
  if (!event.target.open) return;
  showError(null);
  try {
    const devices = await warden.devices();
    $("devices").replaceChildren(
      ...devices.map((d) => {
        const item = document.createElement("li");
        item.textContent = `${d.name}${d.current ? " (this one)" : ""}`;
        return item;
      }),
    );
  } catch (error) {
    showError(error);
  }
});

warden.onAccessChange(render);
warden
  .access()
  .then(render)
  .catch((error) => {
    showError(error);
    document.body.dataset.state = "error";
  });
