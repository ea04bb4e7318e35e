/**
 * The README's shell lines as a test runs them (issue 23: "the README's every command run as
 * written"). The conventions, stated in the README's quick start:
 * - every ```sh block of the chosen sections runs, in order, in one shell;
 * - a command whose line ends with `# [own terminal]` keeps running in a terminal of its own (the
 *   service): the test starts that itself and skips the line;
 * - a comment line starting `# {` right after a command is the answer the command must print,
 *   `…` standing for anything (a pattern ending in `…` is a prefix).
 */

export const OWN_TERMINAL = '# [own terminal]';

export type ReadmeCommand = { section: string; text: string; expected: string[]; ownTerminal: boolean };

/** The body of `## heading` (up to the next `## `), without the `### ` subsections named in `skip`. */
export function sectionOf(markdown: string, heading: string, skip: readonly string[] = []): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section "## ${heading}" in the README`);
  const rest = markdown.slice(start + 1);
  const next = rest.indexOf('\n## ', 3);
  let body = next < 0 ? rest : rest.slice(0, next + 1);
  for (const sub of skip) {
    const at = body.indexOf(`\n### ${sub}\n`);
    if (at < 0) throw new Error(`no subsection "### ${sub}" under "## ${heading}"`);
    const after = body.slice(at + 1).search(/\n#{2,3} /);
    body = body.slice(0, at + 1) + (after < 0 ? '' : body.slice(at + 1 + after + 1));
  }
  return body;
}

/** The commands of the ```sh blocks of a section: continuation lines joined, expected answers attached. */
export function commandsOf(section: string, body: string): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  for (const block of body.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const lines = block[1]!.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim() === '') continue;
      if (line.trimStart().startsWith('#')) {
        const last = out.at(-1);
        if (last && line.startsWith('# {')) last.expected.push(line.slice(2));
        continue;
      }
      let text = line;
      while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
      out.push({ section, text, expected: [], ownTerminal: text.trimEnd().endsWith(OWN_TERMINAL) });
    }
  }
  return out;
}

/** An expected answer as a regular expression over the trimmed output. */
export function answerPattern(expected: string): RegExp {
  const prefix = expected.endsWith('…');
  const escaped = expected
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  return new RegExp(`^${escaped}${prefix ? '' : '$'}`);
}

/**
 * One bash script running every command in order, each between markers on stdout so that its
 * output and exit status can be told apart; the first failing command ends the script. `curl`
 * fails on an HTTP error status (a 4xx answer is a failed step, as a reader would see it).
 */
export function scriptOf(commands: readonly ReadmeCommand[]): string {
  const parts = ['set -o pipefail', 'curl() { command curl --fail-with-body --max-time 60 "$@"; }'];
  commands.forEach((c, i) => {
    parts.push(`printf '\\n@@cmd ${i}\\n'`, c.text, `__rc=$?`, `printf '\\n@@rc ${i} %d\\n' "$__rc"`, `[ "$__rc" -eq 0 ] || exit "$__rc"`);
  });
  return parts.join('\n');
}

/** Each command's output and exit status from the script's stdout. */
export function resultsOf(stdout: string): Map<number, { output: string; rc: number }> {
  const results = new Map<number, { output: string; rc: number }>();
  for (const m of stdout.matchAll(/\n@@cmd (\d+)\n([\s\S]*?)\n@@rc \1 (\d+)\n/g)) results.set(Number(m[1]), { output: m[2]!, rc: Number(m[3]) });
  return results;
}
