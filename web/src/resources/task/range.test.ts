import dayjs from 'dayjs'
import t from 'tap'
import { boundOf, drawingDefaultStart, durationOf, musicDefaultStart } from './range.ts'

t.test('drawing opens on the last 30 days, music from the start of today', async (t) => {
  const now = dayjs('2030-03-31 15:42:10')
  t.equal(drawingDefaultStart(now), '2030-03-01T15:42')
  t.equal(musicDefaultStart(now), '2030-03-31T00:00')
})

t.test('an empty bound is no bound', async (t) => {
  t.equal(boundOf(''), undefined)
  t.equal(boundOf('nonsense'), undefined)
  t.equal(boundOf('2030-03-31T00:00'), dayjs('2030-03-31 00:00:00').unix())
})

t.test('duration only once finished', async (t) => {
  t.equal(durationOf(100, 160), 60)
  t.equal(durationOf(100, 0), undefined)
  t.equal(durationOf(0, 0), undefined)
})
