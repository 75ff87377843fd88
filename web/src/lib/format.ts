import type { StatusData } from '@modelgate/contracts'
import dayjs from 'dayjs'

/** 10k -> k, 1M -> M, 1B -> B (docs/domain.md). */
export function renderNumber (n: number): string {
  const abs = Math.abs(n)
  if (abs >= 1e9) return `${trim(n / 1e9)}B`
  if (abs >= 1e6) return `${trim(n / 1e6)}M`
  if (abs >= 1e4) return `${trim(n / 1e3)}k`
  return String(n)
}

function trim (x: number): string {
  return x.toFixed(1).replace(/\.0$/, '')
}

/** Quota in quota units, or in dollars when DisplayInCurrencyEnabled (QuotaPerUnit units per dollar). */
export function renderQuota (quota: number, status: Pick<StatusData, 'display_in_currency' | 'quota_per_unit'> | undefined, digits = 2): string {
  if (status?.display_in_currency === true && status.quota_per_unit > 0) {
    const dollars = quota / status.quota_per_unit
    const fixed = dollars.toFixed(digits)
    // A small positive amount should not read as free.
    return quota > 0 && Number(fixed) === 0 ? `$${(1 / 10 ** digits).toFixed(digits)}` : `$${fixed}`
  }
  return renderNumber(quota)
}

/** Quota units of `dollars` (for inputs that take dollars when currency display is on). */
export function quotaOf (dollars: number, status: Pick<StatusData, 'quota_per_unit'> | undefined): number {
  return Math.round(dollars * (status?.quota_per_unit ?? 500_000))
}

/** Unix seconds as local `YYYY-MM-DD HH:mm:ss`. */
export function formatTime (seconds: number): string {
  return dayjs.unix(seconds).format('YYYY-MM-DD HH:mm:ss')
}

/** Parses `YYYY-MM-DD HH:mm:ss` (or anything dayjs reads) to unix seconds; undefined when invalid. */
export function parseTime (text: string): number | undefined {
  const d = dayjs(text)
  return d.isValid() ? d.unix() : undefined
}
