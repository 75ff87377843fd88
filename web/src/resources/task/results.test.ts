import t from 'tap'
import { clipsOf, isUnfinished, isWebUrl, lyricsOf, percentOf, videoUrlOf } from './results.ts'

t.test('only SUCCESS and FAILURE are finished', async (t) => {
  for (const s of ['', 'NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'MODAL', 'UNKNOWN']) t.ok(isUnfinished(s), `${s} is unfinished`)
  t.notOk(isUnfinished('SUCCESS'))
  t.notOk(isUnfinished('FAILURE'))
})

t.test('progress text as a percentage', async (t) => {
  t.equal(percentOf('45%'), 45)
  t.equal(percentOf(' 100% '), 100)
  t.equal(percentOf('7'), 7)
  t.equal(percentOf('12.5%'), 12.5)
  t.equal(percentOf('250%'), 100, 'clamped')
  t.equal(percentOf(''), undefined)
  t.equal(percentOf('waiting'), undefined)
  t.equal(percentOf('-5%'), undefined)
})

t.test('only http(s) addresses are used', async (t) => {
  t.ok(isWebUrl('https://cdn.example/a.png'))
  t.ok(isWebUrl('HTTP://127.0.0.1:8080/mj/image/1'))
  t.notOk(isWebUrl('javascript:alert(1)'))
  t.notOk(isWebUrl('data:image/png;base64,AAAA'))
  t.notOk(isWebUrl('/mj/image/1'))
  t.notOk(isWebUrl('https://a b'))
  t.notOk(isWebUrl(42))
})

t.test('the clips of a music task', async (t) => {
  const data = [
    { id: 'c1', title: 'Moon song', audio_url: 'https://cdn.example/c1.mp3', image_url: 'https://cdn.example/c1.png', video_url: 'https://cdn.example/c1.mp4', metadata: { tags: 'pop' } },
    { id: 'c2', title: 'Bad', audio_url: 'javascript:alert(1)', image_url: 'data:x' },
    'junk'
  ]
  t.same(clipsOf(data), [{ id: 'c1', title: 'Moon song', tags: 'pop', audioUrl: 'https://cdn.example/c1.mp3', imageUrl: 'https://cdn.example/c1.png', videoUrl: 'https://cdn.example/c1.mp4' }], 'unsafe addresses dropped, a clip with nothing left too')
  t.same(clipsOf({ clips: [{ audio_url: 'https://cdn.example/x.mp3' }] }).map((c) => c.audioUrl), ['https://cdn.example/x.mp3'], 'clips under a key')
  t.same(clipsOf(JSON.stringify(data)).length, 1, 'stored as JSON text')
  t.same(clipsOf(null), [])
  t.same(clipsOf('not json'), [])
})

t.test('the lyrics of a lyrics task', async (t) => {
  t.same(lyricsOf({ title: 'Verse', text: 'la la' }), [{ title: 'Verse', text: 'la la' }])
  t.same(lyricsOf([{ text: '' }]), [])
})

t.test('a video address only when the data name one', async (t) => {
  t.equal(videoUrlOf({ id: 'video_1', object: 'video', status: 'completed', progress: 100 }), undefined, 'an OpenAI video object has none')
  t.equal(videoUrlOf({ url: 'https://cdn.example/v.mp4' }), 'https://cdn.example/v.mp4')
  t.equal(videoUrlOf([{ video_url: 'https://cdn.example/w.mp4' }]), 'https://cdn.example/w.mp4')
  t.equal(videoUrlOf({ url: 'javascript:alert(1)' }), undefined)
})
