import Type, { type Static } from 'typebox'

/** One model on the pricing page (docs/domain.md, "Pricing item"). */
export const PricingItem = Type.Object({
  model_name: Type.String(),
  /** 0 per token (ratios), 1 per call (model_price dollars). */
  quota_type: Type.Union([Type.Literal(0), Type.Literal(1)]),
  model_ratio: Type.Number(),
  completion_ratio: Type.Number(),
  /** Dollars per call; -1 when the model is priced per token. */
  model_price: Type.Number(),
  /** Groups with at least one enabled channel serving the model. */
  enable_groups: Type.Array(Type.String())
})
export type PricingItem = Static<typeof PricingItem>

/** `GET /api/pricing`: the items plus the group tables, next to `data` as peer consoles expect. */
export const PricingResponse = Type.Object({
  success: Type.Literal(true),
  message: Type.String(),
  data: Type.Array(PricingItem),
  /** Group -> ratio applied to every price of that group. */
  group_ratio: Type.Record(Type.String(), Type.Number()),
  /** Groups the caller may choose for tokens (group -> description). */
  usable_group: Type.Record(Type.String(), Type.String())
})
export type PricingResponse = Static<typeof PricingResponse>
