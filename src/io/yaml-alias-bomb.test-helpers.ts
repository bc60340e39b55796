/**
 * "Billion laughs" YAML for the loaders' bad-input tests: nine anchors, each a list of nine
 * aliases of the one before, 9^9 strings once expanded. Every YAML loader must refuse it with a
 * one-line ConfigError instead of expanding it or failing as an internal error.
 */
export const YAML_ALIAS_BOMB = [
  'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
  'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
  'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
  'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
  'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
  'f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]',
  'g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]',
  'h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]',
  'i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]',
  '',
].join('\n');
