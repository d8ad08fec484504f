// @warden/extension: Warden's client API for a browser extension (MV3, Chrome and Firefox).
export { WardenError, type WardenErrorType } from "./errors.js";
export type { Alarms, Clock, Identity, Runtime, Storage, Tabs } from "./platform.js";
export type { AccessClaims, Via } from "./token.js";
export type { Device, DeviceInfo, Grant, Purchase, Seat, SeatChange, SeatList, SignedIn, SignInSent } from "./types.js";
export { type AccessState, type CheckoutOptions, createWarden, type PaymentPageOptions, type Warden, type WardenOptions } from "./warden.js";
