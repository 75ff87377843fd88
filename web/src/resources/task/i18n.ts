import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('task', {
  title: 'Music tasks',
  intro: 'Music and lyrics generation tasks and their progress.',
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
    failReason: 'Failure reason'
  },
  seconds: '{{n}} s',
  action: {
    music: 'Generate music',
    lyrics: 'Generate lyrics'
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
  intro: '音乐和歌词生成任务及其进度。',
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
    failReason: '失败原因'
  },
  seconds: '{{n}} 秒',
  action: {
    music: '生成音乐',
    lyrics: '生成歌词'
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
