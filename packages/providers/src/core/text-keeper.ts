/**
 * Text a stream converter holds for the gateway to count when the upstream reports no usage,
 * kept until taken (StreamConverter.takeText / untakenBytes).
 */
export function textKeeper () {
  let untaken: string[] = []
  let bytes = 0
  return {
    keep: (text: string) => {
      if (text === '') return
      untaken.push(text)
      bytes += text.length
    },
    /** Everything kept since the last take, each piece through `read` (as kept by default). */
    take: (read: (item: string) => string = (item) => item): string => {
      let text = ''
      for (const item of untaken) text += read(item)
      untaken = []
      bytes = 0
      return text
    },
    bytes: () => bytes
  }
}
