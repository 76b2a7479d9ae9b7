// The reference part of docs/configuration.md, made from the concerns' declarations: one table per concern.
import type { Variable } from './concern.js'
import { concerns } from './index.js'

export const begin = '<!-- Generated from the declarations in src/config/ by `npm run generate:config`: edit them, not this part. -->'
export const end = '<!-- End of the generated part. -->'

// A pipe would end the cell early.
const cell = (markdown: string) => markdown.replaceAll('|', '\\|')

function row (variable: Variable<unknown>): string {
  const fallback = variable.shown ?? (variable.default === '' ? 'unset' : `\`${variable.default}\``)
  return `| \`${variable.name}\` | ${[fallback, variable.reader.accepts, variable.meaning].map(cell).join(' | ')} |`
}

/** The lines between the markers. */
export function reference (): string {
  return concerns.map(concern => [
    `## ${concern.title}`,
    '',
    concern.about,
    '',
    '| variable | default | accepted values | meaning |',
    '|---|---|---|---|',
    ...Object.values(concern.variables).map(row)
  ].join('\n')).join('\n\n')
}

/** `document` with its generated part made anew; the prose around the markers stays as written. */
export function withReference (document: string): string {
  const from = document.indexOf(begin)
  const to = document.indexOf(end)
  if (from < 0 || to < from) throw new Error(`docs/configuration.md must hold the lines\n${begin}\n${end}\nwith the generated part between them`)
  return `${document.slice(0, from + begin.length)}\n\n${reference()}\n\n${document.slice(to)}`
}

/** The first line where `actual` differs from `expected`, naming the variable of its row; null when they are the same. */
export function firstDifference (actual: string, expected: string): string | null {
  const [have, want] = [actual.split('\n'), expected.split('\n')]
  const at = want.findIndex((line, index) => line !== have[index])
  if (at < 0) return have.length === want.length ? null : `line ${want.length + 1}: unexpected ${JSON.stringify(have[want.length])}`
  const variable = [want[at], have[at]].map(line => /^\| `(\w+)`/.exec(line ?? '')?.[1]).find(name => name !== undefined)
  return `line ${at + 1}${variable === undefined ? '' : ` (${variable})`}: expected ${JSON.stringify(want[at])}, found ${JSON.stringify(have[at] ?? null)}`
}
