/**
 * Polls `check` until it holds or `ms` pass (a check that throws counts as not yet); the last
 * result. Tests wait for what they expect this way instead of sleeping a fixed time.
 */
export async function until (check: () => Promise<boolean> | boolean, ms = 15_000, every = 50): Promise<boolean> {
  const deadline = Date.now() + ms
  const holds = async (): Promise<boolean> => await Promise.resolve().then(check).catch(() => false)
  while (Date.now() < deadline) {
    if (await holds()) return true
    await new Promise((resolve) => setTimeout(resolve, every))
  }
  return await holds()
}
