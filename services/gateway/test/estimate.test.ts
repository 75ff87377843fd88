import { countTokens } from 'gpt-tokenizer'
import t from 'tap'
import { approxCounter } from '../src/relay/estimate.js'

// Samples of what prompts hold, written for this test; the estimate was fitted on a wider corpus
// (licence texts, READMEs, this repository's TypeScript, Python's standard library, package.json
// files, TypeScript's Chinese diagnostics), so these check it rather than define it.
const texts = {
  'English prose': `When the night shift at the regional hospital ended, Maria walked out into a parking lot still wet from the evening rain. She had spent twelve hours moving between the emergency ward and the small laboratory on the third floor, where a broken centrifuge had turned every blood test into a waiting game. Nobody had complained out loud, but she could see it in their faces: the tired parents, the farmer with the crushed hand, the teenager who insisted he was fine while his lips turned grey.

The problem, as she explained to the administrator the next morning, was not the machine itself. Machines break. The problem was that the replacement part had been ordered three weeks earlier and was still sitting in a warehouse two hundred miles away, because somebody in procurement had typed the wrong account number. A single digit had cost the hospital dozens of delayed diagnoses, and nobody would ever write it down as the cause.

He listened, nodded, and promised to look into it. She had heard that promise before. On the drive home she thought about the people who design systems like these, the forms and approvals and signatures, and wondered whether any of them had ever stood in a corridor at three in the morning holding a sample that could not be processed. Probably not. Good intentions, she decided, are cheap; what matters is whether the part arrives on Tuesday.

By Friday the centrifuge was working again. The administrator sent an email thanking everyone for their patience and announcing a new review of the purchasing workflow. Maria read it twice, deleted it, and went back to work.`,

  'Chinese prose': `这个城市的早晨总是从菜市场开始的。天还没有完全亮，卖豆腐的老王已经把摊子支好了，一边招呼熟客，一边用沾着水的手数零钱。隔壁卖鱼的阿姨嗓门很大，每天都要和讨价还价的老太太争上几句，但最后总会多送一把葱。对很多住在老街区的人来说，这里不仅是买菜的地方，也是打听消息、交换家长里短的小社会。

近几年，随着手机支付的普及，市场里的变化悄悄发生了。以前大家习惯带着零钱出门，现在几乎每个摊位前都贴着二维码。年轻人觉得方便，可是一些上了年纪的老人却常常手足无措。有一次，一位老先生站在水果摊前研究了半天，最后还是摊主帮他扫了码，又耐心地教他怎么确认金额。

城市规划部门曾经提出要把这个市场改造成现代化的生鲜超市，理由是卫生条件差、交通拥堵。消息传开以后，附近的居民议论纷纷。有人支持，认为环境会变得更干净；也有人担心租金上涨，熟悉的小商贩会因此离开。经过几轮座谈会，最终的方案是保留原有的格局，只对排水系统和屋顶进行翻新。

这件事让很多人意识到，一个城市的温度往往藏在这些看似普通的角落里。高楼和商场固然重要，但人们真正怀念的，常常是清晨的一声吆喝，和一碗刚出锅的热豆浆。`,

  TypeScript: `import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'

export interface RateWindow {
  readonly key: string
  readonly limit: number
  readonly windowMs: number
}

/** Sliding-window counters kept in memory, one per key, pruned lazily. */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>()

  constructor (private readonly now: () => number = Date.now) {}

  /** Records a hit and tells whether it is within the window's limit. */
  allow ({ key, limit, windowMs }: RateWindow): boolean {
    const t = this.now()
    const list = (this.hits.get(key) ?? []).filter((at) => t - at < windowMs)
    if (list.length >= limit) {
      this.hits.set(key, list)
      return false
    }
    list.push(t)
    this.hits.set(key, list)
    return true
  }
}

export async function findUserByEmail (db: Kysely<Database>, email: string): Promise<User | undefined> {
  const normalized = email.trim().toLowerCase()
  const row = await db.selectFrom('users')
    .select(['id', 'email', 'display_name', 'created_at'])
    .where('email', '=', normalized)
    .executeTakeFirst()
  if (row === undefined) return undefined
  return { id: row.id, email: row.email, displayName: row.display_name, createdAt: new Date(row.created_at) }
}

export function fingerprint (parts: readonly string[]): string {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(part).update('\\u0000')
  return hash.digest('hex').slice(0, 16)
}

const retryDelays = [100, 250, 500, 1000, 2000]

export async function withRetry<T> (fn: () => Promise<T>, attempts = retryDelays.length): Promise<T> {
  let lastError: unknown
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn()
    } catch (err) {
      lastError = err
      await new Promise((resolve) => setTimeout(resolve, retryDelays[i] ?? 2000))
    }
  }
  throw new Error(\`gave up after \${attempts} attempts\`, { cause: lastError })
}`,

  Python: `import csv
import statistics
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Station:
    name: str
    readings: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        if value < -90 or value > 60:
            raise ValueError(f"implausible temperature {value} at {self.name}")
        self.readings.append(value)

    @property
    def summary(self) -> dict[str, float]:
        if not self.readings:
            return {}
        return {
            "min": min(self.readings),
            "max": max(self.readings),
            "mean": round(statistics.fmean(self.readings), 2),
        }


def load_stations(path: Path) -> dict[str, Station]:
    """Reads a CSV of station,temperature rows into per-station aggregates."""
    stations: dict[str, Station] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        next(reader, None)  # skip the header
        for line_no, row in enumerate(reader, start=2):
            if len(row) != 2:
                print(f"line {line_no}: expected 2 columns, got {len(row)}")
                continue
            name, raw = row
            station = stations.setdefault(name, Station(name))
            try:
                station.add(float(raw))
            except ValueError as exc:
                print(f"line {line_no}: {exc}")
    return stations


if __name__ == "__main__":
    import sys

    result = load_stations(Path(sys.argv[1]))
    for name in sorted(result):
        stats = result[name].summary
        print(f"{name:<20} {stats.get('min', 0):>6.1f} {stats.get('mean', 0):>6.1f} {stats.get('max', 0):>6.1f}")`,


  'English and Chinese mixed': `今天的周会主要讨论了 gateway 的性能问题。上周五晚上的流量高峰期间，p99 latency 从 120ms 涨到了 850ms，部分请求甚至触发了 upstream timeout。初步排查发现，问题出在 Redis 连接池：当并发超过 500 时，pool 里的连接被耗尽，新的请求只能排队等待。

Action items:
1. 小李负责把 maxRetriesPerRequest 调整为 2，并给 Redis client 加上 connectTimeout 的监控。
2. 老张检查 quota reservation 的逻辑，确认在失败重试时不会重复扣费（double charge）。
3. 下周二之前完成 load test，目标是在 2000 QPS 下 p99 保持在 200ms 以内。

另外，产品那边反馈说 Chinese users 经常抱怨 token 计数不准，尤其是中英文混排的 prompt。我们需要一个更好的估算方法，既要足够快，又不能偏差太大。Dave suggested that we benchmark against the real tokenizer and keep the error under fifteen percent; 大家都同意先按这个标准来做。`
}

const order = {
  model: 'gpt-4o-mini',
  temperature: 0.3,
  max_tokens: 800,
  messages: [
    { role: 'system', content: 'You are a support assistant for an online bookshop. Answer politely and cite order numbers.' },
    { role: 'user', content: 'My order 48213 arrived with a damaged cover. Can I get a replacement?' }
  ],
  tools: [{
    type: 'function',
    function: {
      name: 'lookup_order',
      description: 'Fetch an order by its number, with items, shipping status and payment state.',
      parameters: {
        type: 'object',
        properties: {
          order_id: { type: 'integer', description: 'The numeric order id' },
          include_items: { type: 'boolean', default: true }
        },
        required: ['order_id']
      }
    }
  }],
  orders: [
    { id: 48213, customer: { name: 'Ellen Park', email: 'ellen.park@example.com', since: '2019-04-12' }, items: [{ sku: 'BK-00912', title: 'The Quiet Garden', qty: 1, price: 18.5 }, { sku: 'BK-11873', title: 'Rivers of the North', qty: 2, price: 24.99 }], shipping: { carrier: 'DHL', tracking: 'JD014600006281234567', status: 'delivered', delivered_at: '2024-11-03T14:22:05Z' }, paid: true },
    { id: 48214, customer: { name: 'Tomasz Nowak', email: 't.nowak@example.org', since: '2022-09-30' }, items: [{ sku: 'BK-20410', title: 'A Short History of Maps', qty: 1, price: 32 }], shipping: { carrier: 'UPS', tracking: '1Z999AA10123456784', status: 'in_transit', delivered_at: null }, paid: false }
  ]
}

const samples: Record<string, string> = {
  ...texts,
  'JSON (indented)': JSON.stringify(order, null, 2),
  'JSON (compact, as tool calls are counted)': JSON.stringify(order)
}

t.test('the estimate stays within 15% of o200k_base on prose, Chinese, code, JSON and mixed text', async (t) => {
  for (const [kind, text] of Object.entries(samples)) {
    const exact = countTokens(text)
    const approx = approxCounter(text)
    t.ok(exact > 200, `${kind}: a sample of some length (${exact} tokens)`)
    t.ok(Math.abs(approx - exact) / exact <= 0.15, `${kind}: ${approx} estimated, ${exact} exact (ratio ${(approx / exact).toFixed(3)})`)
  }
})

t.test('short prompts are within a token or two, and nothing is zero but the empty string', async (t) => {
  t.equal(approxCounter(''), 0)
  for (const text of ['hello', 'hi', 'x', '42', ' ', 'Say hello', 'Be brief.', 'Hello world!', 'What is the capital of France?', '你好，世界', 'function add (a, b) { return a + b } // 请把这个函数翻译成 Python']) {
    const exact = countTokens(text)
    const approx = approxCounter(text)
    t.ok(approx >= 1 && Math.abs(approx - exact) <= 2, `${JSON.stringify(text)}: ${approx} estimated, ${exact} exact`)
  }
  t.equal(approxCounter('hello'), countTokens('hello'))
})

t.test('odd characters end every run: control characters, lone surrogates, emoji, blanks at the end', async (t) => {
  // Each of these once risked a run that consumed nothing; the test would then time out.
  for (const text of ['\u0000\u000b\f', '\udc00x', 'a\ud800', 'tail\udfff', '\u00a0\u2028', '👍 ok 🎉', 'end  ', '\t', '\r\n\r\n', 'x\u0007y']) {
    const approx = approxCounter(text)
    const codes = Array.from(text, (c) => c.codePointAt(0)!.toString(16)).join(' ')
    t.ok(Number.isSafeInteger(approx) && approx >= 1 && approx <= text.length * 2, `code points ${codes}: ${approx}`)
  }
})

t.test('a megabyte is estimated in well under 200 ms', async (t) => {
  const all = Object.values(samples).join('\n\n')
  const parts: string[] = []
  for (let size = 0; size < 1_000_000; size += all.length) parts.push(all)
  const text = parts.join('\n\n')
  // The best of a few runs, so that a busy CI box measures the code rather than its neighbours.
  let best = Infinity
  let tokens = 0
  for (let run = 0; run < 5; run++) {
    const start = performance.now()
    tokens = approxCounter(text)
    best = Math.min(best, performance.now() - start)
  }
  t.ok(tokens > 200_000, `${tokens} tokens estimated`)
  t.ok(best < 200, `${text.length} characters in ${best.toFixed(1)} ms`)
})
