// The catalogues by language. Each is typed `Catalogue`: the compiler refuses one that
// lacks a key English has (or has one English has not).
import type { Language } from "../locales.js";
import { de } from "./de.js";
import { type Catalogue, en, type MessageKey } from "./en.js";
import { id } from "./id.js";
import { ja } from "./ja.js";
import { ko } from "./ko.js";
import { nl } from "./nl.js";
import { pl } from "./pl.js";
import { ru } from "./ru.js";
import { tr } from "./tr.js";
import { zhCN } from "./zh-CN.js";

export type { Catalogue, MessageKey };

/** English, and the languages whose catalogue is written; the others read English until theirs is. */
export const CATALOGUES: Partial<Record<Language, Catalogue>> & { en: Catalogue } = {
  en,
  de,
  ja,
  nl,
  pl,
  tr,
  ru,
  id,
  ko,
  "zh-CN": zhCN,
};
