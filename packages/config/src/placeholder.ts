/**
 * Secrets and passwords nobody chose: the placeholders shipped in deploy/ and .env.example,
 * words like "change-me", repeated patterns, keyboard runs. A service given one refuses to start
 * (see loadConfig): signing sessions or sealing keys with a value published in this repository
 * lets anyone forge sessions or open the stored keys.
 */

/** Normalized fragments that mark a value as a placeholder wherever they appear in it. */
const PLACEHOLDER_WORDS = ['changeme', 'changethis', 'replaceme', 'replacethis', 'placeholder', 'yoursecret', 'yourpassword', 'notasecret', 'insertsecret', 'putsecret']

/** Whole values (normalized, optionally followed by digits) that are guesses, not secrets. */
const GUESSABLE = /^(secret|password|passw0rd|admin|root|qwerty|qwertyuiop|asdfgh|letmein|welcome|default|modelgate|test|example)\d*$/

const SEQUENCES = ['0123456789012345678901234567890123456789', '0123456789abcdefghijklmnopqrstuvwxyz0123456789', 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz', 'qwertyuiopasdfghjklzxcvbnm']

/** Whether `s` is a unit of 2-16 characters repeated (at least twice, the last time cut short or not). */
function periodic (s: string): boolean {
  for (let period = 2; period <= 16 && period * 2 <= s.length; period++) {
    let i = period
    while (i < s.length && s[i] === s[i - period]) i++
    if (i === s.length) return true
  }
  return false
}

/**
 * Why `value` is a placeholder rather than a secret, or undefined when it is not one. The reason
 * never contains the value.
 */
export function placeholderSecret (value: string): string | undefined {
  const normalized = value.toLowerCase().replace(/[^a-z0-9]/g, '')
  if (normalized.length === 0) return 'only punctuation'
  if (/^(.)\1*$/s.test(value) || /^(.)\1*$/.test(normalized)) return 'one character repeated'
  if (PLACEHOLDER_WORDS.some((w) => normalized.includes(w))) return 'a placeholder word such as "change-me"'
  if (GUESSABLE.test(normalized)) return 'a common word'
  if (periodic(value) || periodic(normalized)) return 'a short pattern repeated'
  if (normalized.length >= 6 && SEQUENCES.some((s) => s.includes(normalized) || [...s].reverse().join('').includes(normalized))) return 'a run of consecutive characters'
  return undefined
}
