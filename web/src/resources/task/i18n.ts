import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('task', {
  title: 'Music tasks',
  intro: 'Music, lyrics and video generation tasks, their progress and results.',
  empty: 'No tasks in this range',
  filter: {
    title: 'Filters',
    start: 'From',
    end: 'To',
    taskId: 'Task ID',
    channel: 'Channel ID'
  },
  col: {
    submitTime: 'Submitted',
    finishTime: 'Finished',
    duration: 'Duration',
    channel: 'Channel',
    platform: 'Platform',
    action: 'Type',
    taskId: 'Task ID',
    status: 'Status',
    progress: 'Progress',
    result: 'Result',
    failReason: 'Failure reason'
  },
  seconds: '{{n}} s',
  progressOf: 'Progress {{n}}%',
  live: 'Unfinished tasks update every {{n}} seconds.',
  openOriginal: 'Open original',
  result: {
    song: 'Song {{n}}',
    cover: 'Cover of {{title}}',
    play: 'Play {{title}}',
    clipVideo: 'Video',
    lyrics: 'Lyrics',
    video: 'Play or download the video'
  },
  platform: {
    suno: 'Suno',
    video: 'Video'
  },
  action: {
    music: 'Generate music',
    lyrics: 'Generate lyrics',
    video: 'Generate video',
    remix: 'Remix video'
  },
  status: {
    submitting: 'Submitting',
    notStart: 'Not started',
    submitted: 'Submitted',
    queued: 'Queued',
    inProgress: 'In progress',
    success: 'Succeeded',
    failure: 'Failed',
    unknown: 'Unknown'
  }
}, {
  title: '音乐任务',
  intro: '音乐、歌词和视频生成任务，及其进度和结果。',
  empty: '该时间范围内没有任务',
  filter: {
    title: '筛选',
    start: '起始时间',
    end: '结束时间',
    taskId: '任务 ID',
    channel: '渠道 ID'
  },
  col: {
    submitTime: '提交时间',
    finishTime: '结束时间',
    duration: '耗时',
    channel: '渠道',
    platform: '平台',
    action: '类型',
    taskId: '任务 ID',
    status: '状态',
    progress: '进度',
    result: '结果',
    failReason: '失败原因'
  },
  seconds: '{{n}} 秒',
  progressOf: '进度 {{n}}%',
  live: '未完成的任务每 {{n}} 秒自动更新。',
  openOriginal: '打开原图',
  result: {
    song: '歌曲 {{n}}',
    cover: '{{title}} 的封面',
    play: '播放 {{title}}',
    clipVideo: '视频',
    lyrics: '歌词',
    video: '播放或下载视频'
  },
  platform: {
    suno: 'Suno',
    video: '视频'
  },
  action: {
    music: '生成音乐',
    lyrics: '生成歌词',
    video: '生成视频',
    remix: '重制视频'
  },
  status: {
    submitting: '提交中',
    notStart: '未启动',
    submitted: '已提交',
    queued: '排队中',
    inProgress: '执行中',
    success: '成功',
    failure: '失败',
    unknown: '未知'
  }
})
