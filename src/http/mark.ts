// Warden's mark: a shield with a tick, in the dashboard's green. The API reference page's
// icon and logo, and the dashboard's icon (`/dashboard/assets/warden.svg`).
export const MARK = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 7v8c0 7.5 5.1 13.4 12 15 6.9-1.6 12-7.5 12-15V7z" fill="#2f6f4f"/><path d="m10 16 4 4 8-9" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>`;
