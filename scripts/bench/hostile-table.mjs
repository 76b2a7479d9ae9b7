// The hostile run's table: per attack, the victim beside it against the victim alone (before and after it), what the attacker sent and got, and issue 38's targets.
import { fixed, int, ms } from './format.mjs'

// Issue 38: beside each attack, GET one keeps p99 < 50 ms and at least 70 % of its requests/s alone.
const p99Target = 50
const rateTarget = 0.7

const check = met => met ? 'met' : '**not met**'
// A window with no answer has no latency (autocannon then reports 0).
const latency = (s, key) => s.total > 0 ? ms(s[key]) : 'n/a'

/** "26 sent: 3 × 400, 23 unanswered; a keyed export meanwhile: 503" */
function attackerCell ({ sent, answers, notes }) {
  const answered = Object.values(answers).reduce((sum, n) => sum + n, 0)
  const parts = Object.entries(answers).map(([status, n]) => `${int(n)} × ${status}`)
  if (answered < sent) parts.push(`${int(sent - answered)} unanswered`)
  return [`${int(sent)} sent: ${parts.join(', ')}`, ...notes].join('; ')
}

export function hostileTable (rows, engine) {
  const lines = [
    '| attack | applies | victim req/s alone (before, after) → beside | ratio to alone | beside p50 / p99 / max ms | alone p99 ms | beside errors / non-2xx | the attacker sent and got | attacker CPU s | p99 < 50 ms | ≥ 70 % of alone |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---|---|'
  ]
  for (const { attack, alone, beside, after, attacker } of rows) {
    // Against the mean of the windows before and after (the machine's rate drifts), or before alone when the service did not survive.
    const ratio = beside.rps / (after === null ? alone.rps : (alone.rps + after.rps) / 2)
    lines.push(`| ${attack.name} | ${attack.applies[engine]} | ${int(alone.rps)}${after === null ? '' : `, ${int(after.rps)}`} → ${int(beside.rps)} | ${fixed(ratio)} | ` +
      `${latency(beside, 'p50')} / ${latency(beside, 'p99')} / ${latency(beside, 'max')} | ${latency(alone, 'p99')} | ${beside.errors} / ${beside.non2xx} | ` +
      `${attackerCell(attacker)} | ${fixed(attacker.cpuSeconds, 1)} | ${check(beside.total > 0 && beside.p99 < p99Target)} | ${check(ratio >= rateTarget)} |`)
  }
  return lines.join('\n')
}
