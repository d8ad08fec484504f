// @warden/extension: Warden's client API for a browser extension (MV3, Chrome and Firefox).
export { UsageLimitError, WardenError, type WardenErrorType } from "./errors.js";
export type { Alarms, Clock, I18n, Identity, Runtime, Storage, Tabs } from "./platform.js";
export type { AccessClaims, Via } from "./token.js";
export type { Device, DeviceInfo, Grant, MeterUsage, Purchase, Seat, SeatChange, SeatList, SignedIn, SignInSent, Spent, UsageBucket } from "./types.js";
export {
  type AccessState,
  type CheckoutOptions,
  createWarden,
  type PaymentPageOptions,
  type SpendOptions,
  type Warden,
  type WardenOptions,
} from "./warden.js";
