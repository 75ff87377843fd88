import type { Page } from 'playwright-core'
import type { Test } from 'tap'

/** Polls `check` every 50 ms until it holds (playwright-core has no expect). */
export async function until (check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** How many pixels the page is wider than the window. */
export const overflow = async (page: Page): Promise<number> => await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

export async function noOverflow (t: Test, page: Page, what: string): Promise<void> {
  t.equal(await overflow(page), 0, `${what}: nothing wider than the window`)
}

/**
 * Waits for a toast of `severity` containing `text`, then closes it so that the next one shows at
 * once; its text. Read and closed in the page in one step: an open dialog hides the toast from the
 * accessibility tree and covers it with its backdrop, and the toast may already be gone.
 */
export async function toast (page: Page, severity: 'success' | 'info' | 'warning' | 'error', text: string | RegExp): Promise<string> {
  const alert = page.getByTestId(`toast-${severity}`).filter({ hasText: text })
  await alert.waitFor()
  const shown = await alert.evaluate((el: HTMLElement) => {
    const text = el.innerText
    el.querySelector('button')?.click()
    return text
  }, undefined, { timeout: 2000 }).catch(() => undefined)
  if (shown === undefined) return ''
  await alert.waitFor({ state: 'detached' })
  return shown
}

/**
 * Answers the console's secure-verification dialog (components/VerifyDialog) with the password:
 * sensitive actions (password, email, credential options, disabling 2FA) ask for it once per
 * five minutes.
 */
export async function confirmIdentity (page: Page, password: string): Promise<void> {
  const dialog = page.getByRole('dialog', { name: 'Confirm it is you' })
  await dialog.waitFor()
  await dialog.getByLabel('Your password').fill(password)
  await dialog.getByRole('button', { name: 'Verify' }).click()
  await dialog.waitFor({ state: 'detached' })
}
