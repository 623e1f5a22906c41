// The expectation language of scenario files, read by the scenario loader
// (plan/scenarios.mjs) and judged by report/verdicts.mjs. The only place that
// knows its forms:
//   ±N%            within N% of the published value
//   ±N%of:NAME     within N% of another measured metric of the step, or a model value
//   ==N >=N <=N >N <N   compared with a number
//   >step:ID <step:ID   compared with another step's measured value (aggregated)
//   A..B           from A to B, both included
//   ~EXPR          informational: "as article" / "unlike article", never a failure

const NUMBER = '-?\\d+(?:\\.\\d+)?';
const FORMS = [
  [/^±(\d+(?:\.\d+)?)%(?:of:([a-z0-9_]+))?$/, (m) => ({ tolerance: Number(m[1]), of: m[2] ?? null })],
  [new RegExp(`^(${NUMBER})\\.\\.(${NUMBER})$`), (m) => ({ range: [Number(m[1]), Number(m[2])] })],
  [new RegExp(`^(>=|<=|==|>|<)(${NUMBER})$`), (m) => ({ op: m[1], number: Number(m[2]), ref: null })],
  [/^([<>])step:([a-z0-9][a-z0-9-]*)$/, (m) => ({ op: m[1], number: null, ref: m[2] })],
];

// parseExpectation EXPR → {info, body, tolerance, of} | {info, body, range}
// | {info, body, op, number, ref}; an Error saying what is allowed otherwise.
export function parseExpectation(expr) {
  const text = String(expr).trim();
  const info = text.startsWith('~');
  const body = info ? text.slice(1).trim() : text;
  for (const [pattern, parsed] of FORMS) {
    const m = pattern.exec(body);
    if (m) return { info, body, ...parsed(m) };
  }
  throw new Error(`bad expectation "${expr}": use ±N%, ±N%of:NAME, ==N, >=N, <=N, >N, <N, >step:ID, <step:ID or A..B, `
    + 'with a leading ~ to only inform');
}
