import { neutralizeCell } from '../../lib/cells.ts'
import { saveBlob } from '../../lib/download.ts'

/** Characters no common file system accepts in a name. */
const UNSAFE = /[\\/:*?"<>|\p{Cc}]/gu

/** `<name>.txt`, the name made safe for a file system (an empty one becomes "redemption"). */
export function codesFileName (name: string): string {
  const safe = name.trim().replace(UNSAFE, '_')
  return `${safe === '' ? 'redemption' : safe}.txt`
}

/**
 * One code per line, as the console has always exported them. Lists are opened in spreadsheets:
 * a line that could start a formula is neutralised (codes the server makes never do).
 */
export function codesText (keys: string[]): string {
  return keys.map((key) => neutralizeCell(key.replace(/[\r\n]/g, ''))).join('\n')
}

/**
 * The name the server gives a code created without one (services/redemptions.ts describeQuota):
 * dollars with two decimals when the site shows currency and the sum is at least a cent, else units.
 */
export function defaultCodeName (quota: number, status: { display_in_currency: boolean, quota_per_unit: number } | undefined): string {
  const dollars = status === undefined || status.quota_per_unit <= 0 ? 0 : quota / status.quota_per_unit
  return status?.display_in_currency === true && dollars >= 0.01 ? `$${dollars.toFixed(2)}` : String(quota)
}

/** Saves `text` as a download named `fileName` (a Blob behind a temporary link). */
export function downloadText (text: string, fileName: string): void {
  saveBlob(new Blob([text], { type: 'text/plain;charset=utf-8' }), fileName)
}
