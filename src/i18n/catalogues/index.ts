// The catalogues by language. Each is typed `Catalogue`: the compiler refuses one that
// lacks a key English has (or has one English has not).
import type { Language } from "../locales.js";
import { de } from "./de.js";
import { type Catalogue, en, type MessageKey } from "./en.js";
import { es } from "./es.js";
import { fr } from "./fr.js";
import { it } from "./it.js";
import { ja } from "./ja.js";
import { ptBR } from "./pt-BR.js";

export type { Catalogue, MessageKey };

/** English, and the languages whose catalogue is written; the others read English until theirs is. */
export const CATALOGUES: Partial<Record<Language, Catalogue>> & { en: Catalogue } = {
  en,
  de,
  fr,
  es,
  "pt-BR": ptBR,
  it,
  ja,
};
