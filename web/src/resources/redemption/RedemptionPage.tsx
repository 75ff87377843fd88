export default function RedemptionPage () { return null }
