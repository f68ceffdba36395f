// Comparing a person's or a company's name with a listed one (docs/compliance.md, Matching). Names are
// normalized — transliterated to Latin letters by any-ascii (Cyrillic, Greek, Arabic and the rest),
// case and diacritics folded, punctuation and honorifics dropped — into tokens, and compared token by
// token by Jaro-Winkler, whatever their order. A token is also compared by its consonant skeleton (no
// vowels, no doubled letters), so a name transliterated from Arabic, a script that writes no short
// vowels (محمد → "mhmd"), meets its Latin spelling ("Mohammed" → "mhmd").
import { jaroWinkler } from '@skyra/jaro-winkler';
import anyAscii from 'any-ascii';

/** Words that say who someone is, not which one: dropped before comparing */
const HONORIFICS = new Set([
  'mr',
  'mrs',
  'ms',
  'miss',
  'dr',
  'prof',
  'sir',
  'dame',
  'lord',
  'sheikh',
  'shaikh',
  'sheik',
  'haji',
  'hajji',
  'mullah',
  'imam',
  'general',
  'gen',
  'colonel',
  'col',
  'major',
  'captain',
  'capt',
  'admiral',
  'president',
  'minister',
  'emir',
  'prince',
  'king',
  'the',
]);
/** Particles written joined or apart (al-Masri, Almasri, El Masri): folded into the next token */
const PARTICLES = new Set([
  'al',
  'el',
  'ul',
  'bin',
  'ibn',
  'bint',
  'ben',
  'abu',
  'abd',
  'van',
  'von',
  'der',
  'de',
  'da',
  'di',
  'la',
  'le',
  'du',
]);
/** Legal forms of companies: not what tells one company from another */
const LEGAL_FORMS = new Set([
  'llc',
  'ltd',
  'limited',
  'inc',
  'corp',
  'corporation',
  'co',
  'company',
  'plc',
  'jsc',
  'ojsc',
  'pjsc',
  'cjsc',
  'ooo',
  'oao',
  'zao',
  'pao',
  'ao',
  'gmbh',
  'ag',
  'sa',
  'sarl',
  'srl',
  'bv',
  'nv',
  'fze',
  'fzco',
  'fzc',
  'llp',
  'lp',
  'pte',
  'pvt',
  'sas',
  'spa',
  'kg',
]);

/** A name as the tokens it is compared by: Latin lowercase letters and digits */
export function nameTokens(name: string): string[] {
  const folded = anyAscii(name.normalize('NFKC'))
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
  const words = folded.split(' ').filter((w) => w !== '' && !HONORIFICS.has(w) && !LEGAL_FORMS.has(w));
  const tokens: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const next = words[i + 1];
    // al Masri, abd al Rahman: joined as the other spelling writes them (almasri, abdalrahman)
    if (PARTICLES.has(word) && next !== undefined) {
      words[i + 1] = word + next;
      continue;
    }
    tokens.push(word);
  }
  return tokens;
}

/** A token's consonant skeleton: its consonants, doubled ones once (the token itself when it has none) */
export function skeleton(token: string): string {
  const consonants = token.replace(/[aeiouyhw]/g, '').replace(/(.)\1+/g, '$1');
  return consonants === '' ? token : consonants;
}

/** Written without short vowels, as a name transliterated from Arabic script is (mhmd, lrshyd) */
const vowelless = (token: string) => !/[aeiou]/.test(token.slice(1));

/**
 * How alike two tokens are, 0–1: by Jaro-Winkler, or, when one of them is written without vowels, by
 * their skeletons (a little less sure). Two spelled-out names with one skeleton are told apart by their
 * vowels (Hassan, Hussein), as a screening officer would.
 */
export function tokenSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const spelled = jaroWinkler(a, b);
  const bySkeleton = (vowelless(a) || vowelless(b)) && skeleton(a) === skeleton(b) ? 0.93 : 0;
  return Math.max(spelled, bySkeleton);
}

/**
 * How alike a screened name is to a listed one, 0–1, whatever the order of their tokens: each token of the
 * shorter name meets its best match in the longer, weighted by how rare it is (`weight`: a common token
 * such as "mohammed" says less), and a longer name's extra tokens (a middle name, a patronymic the other
 * leaves out) cost a little. The names written joined are compared too (Abdul Rahman, Abdulrahman).
 */
export function nameSimilarity(
  screened: readonly string[],
  listed: readonly string[],
  weight: (token: string) => number,
  similarity: (a: string, b: string) => number = tokenSimilarity,
): number {
  if (screened.length === 0 || listed.length === 0) return 0;
  const [shorter, longer] = screened.length <= listed.length ? [screened, listed] : [listed, screened];
  let total = 0;
  let weights = 0;
  let used = 0; // a bit per token of the longer name already met (names past 30 tokens are cut)
  for (const token of shorter) {
    let best = 0;
    let bestAt = -1;
    for (let i = 0; i < longer.length && i < 30; i++) {
      if (used & (1 << i)) continue;
      const alike = similarity(token, longer[i] as string);
      if (alike > best) {
        best = alike;
        bestAt = i;
      }
    }
    if (bestAt >= 0) used |= 1 << bestAt;
    const w = weight(token);
    total += best * w;
    weights += w;
  }
  const tokens = weights > 0 ? total / weights : 0;
  // The longer name's tokens left over: a middle name or patronymic the other leaves out costs little, a
  // first or last one (another given name: Viktor Vladimirovich Lebedev is not Vladimir Lebedev) more.
  // A one-token name meeting a longer one is weak evidence (a surname alone): it counts less.
  let coverage = 1;
  if (shorter.length === 1 && longer.length > 1) coverage = 0.85;
  else {
    for (let i = 0; i < longer.length && i < 30; i++) {
      if (!(used & (1 << i))) coverage -= i === 0 || i === longer.length - 1 ? 0.07 : 0.02;
    }
  }
  // Written joined on one side and apart on the other (Abdul Rahman, Abdulrahman): compared joined
  const joined =
    screened.length === listed.length ? 0 : jaroWinkler(screened.join(''), listed.join('')) * 0.97;
  return Math.max(tokens * coverage, joined);
}
