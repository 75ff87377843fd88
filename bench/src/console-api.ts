interface Envelope<T> { success: boolean, message: string, data: T }

/** The console API as a signed-in user calls it: session cookie plus the New-Api-User header. */
export class ConsoleSession {
  readonly base: string
  readonly userId: number
  readonly #cookie: string

  private constructor (base: string, userId: number, cookie: string) {
    this.base = base
    this.userId = userId
    this.#cookie = cookie
  }

  /** POST /api/user/login; throws with the server's message when refused. */
  static async login (base: string, username: string, password: string): Promise<ConsoleSession> {
    const res = await fetch(`${base}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-language': 'en' },
      body: JSON.stringify({ username, password })
    })
    const body = await res.json() as Envelope<{ id: number }>
    if (!body.success) throw new Error(`login as ${username} refused: ${body.message}`)
    const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('session='))
    if (cookie === undefined) throw new Error(`login as ${username} set no session cookie`)
    return new ConsoleSession(base, body.data.id, cookie)
  }

  /** One call; returns `data`, throws on HTTP errors and on `success: false`. */
  async call<T> (method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        cookie: this.#cookie,
        'new-api-user': String(this.userId),
        'accept-language': 'en',
        ...(body === undefined ? {} : { 'content-type': 'application/json' })
      },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    let parsed: Envelope<T>
    try {
      parsed = JSON.parse(text) as Envelope<T>
    } catch {
      throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 200)}`)
    }
    if (!res.ok || !parsed.success) throw new Error(`${method} ${path}: HTTP ${res.status} ${parsed.message ?? text.slice(0, 200)}`)
    return parsed.data
  }
}

