// The catalogues by language. Each is typed `Catalogue`: the compiler refuses one that
// lacks a key English has (or has one English has not).
import type { Language } from "../locales.js";
import { de } from "./de.js";
import { type Catalogue, en, type MessageKey } from "./en.js";
import { es } from "./es.js";
import { fr } from "./fr.js";
import { id } from "./id.js";
import { it } from "./it.js";
import { ja } from "./ja.js";
import { ko } from "./ko.js";
import { nl } from "./nl.js";
import { pl } from "./pl.js";
import { ptBR } from "./pt-BR.js";
import { ru } from "./ru.js";
import { tr } from "./tr.js";
import { zhCN } from "./zh-CN.js";

export type { Catalogue, MessageKey };

/** Every language of the picker has its catalogue (the compiler asks for each). */
export const CATALOGUES: Record<Language, Catalogue> = {
  en,
  de,
  fr,
  es,
  "pt-BR": ptBR,
  it,
  nl,
  pl,
  tr,
  ru,
  id,
  ja,
  ko,
  "zh-CN": zhCN,
};
