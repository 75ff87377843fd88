export default function PricingPage () { return null }
