import dayjs, { type Dayjs } from 'dayjs'

/** The value a `datetime-local` input takes. */
export const INPUT_FORMAT = 'YYYY-MM-DDTHH:mm'

export const toInput = (d: Dayjs): string => d.format(INPUT_FORMAT)

/** Drawing tasks open on the last 30 days. */
export const drawingDefaultStart = (now: Dayjs = dayjs()): string => toInput(now.subtract(30, 'day'))

/** Music tasks open from the start of today. */
export const musicDefaultStart = (now: Dayjs = dayjs()): string => toInput(now.startOf('day'))

/** A filter input as unix seconds; empty or unreadable is no bound. */
export function boundOf (text: string): number | undefined {
  if (text.trim() === '') return undefined
  const d = dayjs(text)
  return d.isValid() ? d.unix() : undefined
}

/** Seconds from submit to finish, or undefined while unfinished. */
export function durationOf (submit: number, finish: number): number | undefined {
  return submit > 0 && finish >= submit ? finish - submit : undefined
}
