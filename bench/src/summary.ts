// `npm run summary -w @modelgate/bench`: puts the summary of bench/results/latest.json into
// docs/performance.md between <!-- bench:start --> and <!-- bench:end -->.
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type BenchReport, machineLine, targetTable } from './report.js'

const START = '<!-- bench:start -->'
const END = '<!-- bench:end -->'

const latest = fileURLToPath(new URL('../results/latest.json', import.meta.url))
const page = fileURLToPath(new URL('../../docs/performance.md', import.meta.url))

const report = JSON.parse(readFileSync(latest, 'utf8')) as BenchReport
const met = report.targets.filter((t) => t.pass).length
const summary = [
  START,
  `Latest full run, ${report.date}: ${met} of ${report.targets.length} targets met, on ${machineLine(report)}.`,
  `All scenarios and figures: [bench/results/${report.date}.md](../bench/results/${report.date}.md).`,
  '',
  targetTable(report.targets),
  END
].join('\n')

const text = readFileSync(page, 'utf8')
const from = text.indexOf(START)
const to = text.indexOf(END)
if (from < 0 || to < from) throw new Error(`docs/performance.md has no ${START} ... ${END} section`)
writeFileSync(page, text.slice(0, from) + summary + text.slice(to + END.length))
process.stdout.write(`docs/performance.md: performance summary of ${report.date} written\n`)
