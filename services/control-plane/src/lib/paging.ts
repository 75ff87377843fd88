import Type from 'typebox'

/** `p` (1-based) and `page_size` as the console sends them. */
export const PageQuery = {
  p: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 }))
}

export function pageOf (q: { p?: number, page_size?: number }): { page: number, pageSize: number, offset: number } {
  const page = q.p ?? 1
  const pageSize = q.page_size ?? 20
  return { page, pageSize, offset: (page - 1) * pageSize }
}
