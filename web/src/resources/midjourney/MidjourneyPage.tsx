export default function MidjourneyPage () { return null }
