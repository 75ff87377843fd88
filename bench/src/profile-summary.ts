// `npm run profile-summary -w @modelgate/bench -- results/profiles/<file>.cpuprofile [top] [skip-ms]`: self time
// by function and by package, for profiles taken with `npm run bench -- --profile`.
import { summarizeProfile } from './profile.js'

const [file, top, skip] = process.argv.slice(2)
if (file === undefined) {
  process.stderr.write('usage: profile-summary <file.cpuprofile> [top] [skip-ms]\n')
  process.exit(2)
}
process.stdout.write(summarizeProfile(file, { top: top === undefined ? 30 : Number(top), skipMs: skip === undefined ? undefined : Number(skip) }) + '\n')
