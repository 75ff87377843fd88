const loading = new Map<string, Promise<void>>()

/** Loads a third-party script once per page; later callers share the first load. */
export async function loadScript (src: string): Promise<void> {
  let pending = loading.get(src)
  if (pending === undefined) {
    pending = new Promise<void>((resolve, reject) => {
      const el = document.createElement('script')
      el.src = src
      el.async = true
      el.onload = () => { resolve() }
      el.onerror = () => {
        // Forgotten so that a later visit can try again (the network may come back).
        loading.delete(src)
        el.remove()
        reject(new Error(`cannot load ${src}`))
      }
      document.head.appendChild(el)
    })
    loading.set(src, pending)
  }
  await pending
}
