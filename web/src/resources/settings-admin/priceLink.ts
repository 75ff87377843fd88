/** The query parameter that opens the price editor on one model (`VisualRatioEditor`). */
export const PRICE_PARAM = 'price'

/** Where a model's price is set: the operation settings, the editor opened on that model. */
export function priceEditorPath (model: string): string {
  return `/setting?tab=operation&${PRICE_PARAM}=${encodeURIComponent(model)}`
}
