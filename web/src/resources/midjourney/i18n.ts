import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('midjourney', {
  title: 'Drawing tasks',
  intro: 'Midjourney drawing tasks, their progress and images.',
  empty: 'No drawing tasks in this range',
  mjId: 'Task ID',
  col: {
    submitTime: 'Submitted',
    channel: 'Channel',
    code: 'Submit result',
    action: 'Type',
    mjId: 'Task ID',
    status: 'Status',
    progress: 'Progress',
    image: 'Image',
    prompt: 'Prompt',
    promptEn: 'Prompt (English)',
    failReason: 'Failure reason',
    duration: 'Duration'
  },
  openImage: 'Open the image of task {{id}}',
  code: {
    submitted: 'Submitted',
    waiting: 'Waiting',
    duplicate: 'Duplicate',
    notSubmitted: 'Not submitted',
    other: 'Code {{code}}'
  },
  action: {
    imagine: 'Imagine',
    upscale: 'Upscale',
    variation: 'Variation',
    highVariation: 'Strong variation',
    lowVariation: 'Subtle variation',
    pan: 'Pan',
    describe: 'Describe',
    blend: 'Blend',
    shorten: 'Shorten',
    reroll: 'Reroll',
    inpaint: 'Vary region',
    zoom: 'Zoom',
    customZoom: 'Custom zoom',
    swapFace: 'Swap face',
    upload: 'Upload',
    modal: 'Modal'
  },
  status: {
    notStart: 'Not started',
    submitted: 'Submitted',
    inProgress: 'In progress',
    modal: 'Waiting for input',
    success: 'Succeeded',
    failure: 'Failed',
    unknown: 'Unknown'
  }
}, {
  title: '绘图任务',
  intro: 'Midjourney 绘图任务、进度和图片。',
  empty: '该时间范围内没有绘图任务',
  mjId: '任务 ID',
  col: {
    submitTime: '提交时间',
    channel: '渠道',
    code: '提交结果',
    action: '类型',
    mjId: '任务 ID',
    status: '状态',
    progress: '进度',
    image: '图片',
    prompt: '提示词',
    promptEn: '英文提示词',
    failReason: '失败原因',
    duration: '耗时'
  },
  openImage: '打开任务 {{id}} 的图片',
  code: {
    submitted: '已提交',
    waiting: '等待中',
    duplicate: '重复提交',
    notSubmitted: '未提交',
    other: '代码 {{code}}'
  },
  action: {
    imagine: '绘图',
    upscale: '放大',
    variation: '变换',
    highVariation: '强变换',
    lowVariation: '弱变换',
    pan: '平移',
    describe: '图生文',
    blend: '图混合',
    shorten: '缩词',
    reroll: '重绘',
    inpaint: '局部重绘',
    zoom: '变焦',
    customZoom: '自定义变焦',
    swapFace: '换脸',
    upload: '上传',
    modal: '窗口'
  },
  status: {
    notStart: '未启动',
    submitted: '已提交',
    inProgress: '执行中',
    modal: '等待输入',
    success: '成功',
    failure: '失败',
    unknown: '未知'
  }
})
