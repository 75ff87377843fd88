/** Saves `blob` as a download named `fileName` (a temporary link to an object URL). */
export function saveBlob (blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  link.style.display = 'none'
  document.body.appendChild(link)
  link.click()
  link.remove()
  // Revoked after the click has been handled: revoking at once can cancel the download.
  setTimeout(() => { URL.revokeObjectURL(url) }, 1000)
}
