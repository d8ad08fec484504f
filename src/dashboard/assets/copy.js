// The dashboard's one script, loaded only where a value is to be pasted elsewhere (the
// Stripe page's webhook URL, a new API key, an endpoint's signing secret). Without it the value is still in a read-only field to
// select and copy by hand; with it, each Copy button (hidden until this runs) copies its
// field. No inline script anywhere: the policy's script-src 'self' allows this file only.
for (const button of document.querySelectorAll("button[data-copy]")) {
  const field = document.getElementById(button.dataset.copy ?? "");
  if (!(field instanceof HTMLInputElement)) continue;
  button.hidden = false;
  // The page's words (a hosted page's are the buyer's language): the button's own, and data-copied's.
  const label = button.textContent;
  button.addEventListener("click", async () => {
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
    } catch {
      // No clipboard API (a plain-http address other than localhost): the browser's own copy of the selection.
      document.execCommand("copy");
    }
    button.textContent = button.dataset.copied ?? "Copied";
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
}
