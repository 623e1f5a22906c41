// Renders a scenario step's HAProxy config: the lab's baseline config with the
// step's settings applied section by section, so a scenario file only names
// what it changes ("global": {"maxconn": "20"}) and every other line (the
// resolvers, the server templates, the exporter) stays the baseline's.
import { settingProblem } from './settings.mjs';

// A section starts at a line with no indentation ("global", "backend be_slow").
function isSectionHeader(line) {
  return /^[a-z]/.test(line);
}

function sectionKey(header) {
  return header.trim().split(/\s+/).join(' ');
}

// Does this config line set KEYWORD (which may be several words)?
function setsKeyword(line, keyword) {
  const text = line.trim();
  return text === keyword || text.startsWith(`${keyword} `) || text.startsWith(`${keyword}\t`);
}

function splitSections(text) {
  const sections = [{ key: null, lines: [] }];
  for (const line of text.split('\n')) {
    if (isSectionHeader(line)) sections.push({ key: sectionKey(line), lines: [line] });
    else sections[sections.length - 1].lines.push(line);
  }
  return sections;
}

// Index after the section's last setting (before trailing blanks/comments).
function endOfSettings(lines) {
  let end = lines.length;
  while (end > 1 && (lines[end - 1].trim() === '' || lines[end - 1].trim().startsWith('#'))) end -= 1;
  return end;
}

function line(keyword, value) {
  return value === '' ? `    ${keyword}` : `    ${keyword} ${value}`;
}

// applySetting LINES KEYWORD VALUE: VALUE a string replaces (or adds) the
// setting, an array gives one line per item, null removes it; "keyword+"
// appends VALUE to the existing line (e.g. server options). settingProblem
// has checked them.
function applySetting(section, keyword, value) {
  const lines = section.lines;
  if (keyword.endsWith('+')) {
    const base = keyword.slice(0, -1);
    const at = lines.findIndex((l, i) => i > 0 && setsKeyword(l, base));
    if (at < 0) throw new Error(`"${base}" is not set in section "${section.key}": cannot append to it`);
    lines[at] = `${lines[at].replace(/\s+$/, '')} ${value}`;
    return;
  }
  const values = value === null ? [] : [].concat(value).map(String);
  const first = lines.findIndex((l, i) => i > 0 && setsKeyword(l, keyword));
  const kept = lines.filter((l, i) => i === 0 || !setsKeyword(l, keyword));
  const at = first >= 0 ? first : endOfSettings(kept);
  kept.splice(at, 0, ...values.map((v) => line(keyword, v)));
  section.lines = kept;
}

// renderConfig BASELINE SETTINGS DESCRIPTION: the config text for one step.
// SETTINGS: {"<section header>": {"<keyword>": value}}; DESCRIPTION goes into
// "global description", which the runner reads back from "show info" to know
// the step's config is the one running. Throws on a setting settingProblem
// refuses (the loader names the file that holds it).
export function renderConfig(baseline, settings, description) {
  for (const [key, values] of Object.entries(settings)) {
    for (const [keyword, value] of Object.entries(values)) {
      const problem = settingProblem(key, keyword, value);
      if (problem) throw new Error(`section "${key}": ${problem}`);
    }
  }
  const sections = splitSections(baseline);
  const byKey = new Map(sections.filter((s) => s.key).map((s) => [s.key, s]));
  const all = { ...settings, global: { ...(settings.global ?? {}), description } };
  for (const [key, values] of Object.entries(all)) {
    const section = byKey.get(sectionKey(key));
    if (!section) throw new Error(`section "${key}" is not in the baseline HAProxy config`);
    for (const [keyword, value] of Object.entries(values)) applySetting(section, keyword, value);
  }
  return sections.flatMap((s) => s.lines).join('\n');
}
