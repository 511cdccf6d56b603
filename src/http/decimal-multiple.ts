/**
 * `multipleOf` decided on the decimals a client writes, not on binary
 * floating point. Ajv and TypeBox test `value / divisor` or `value % divisor`
 * in doubles, where 0.3 is not a multiple of 0.1 and 19.99 not one of 0.01, so
 * a price field with `multipleOf: 0.01` refused most prices. Every finite
 * double has a shortest decimal spelling (`String(0.3)` is `0.3`), which is
 * what the client sent whenever it wrote 17 significant digits or fewer; that
 * spelling is compared exactly, in integers.
 */

interface Decimal {
  readonly digits: bigint
  readonly exponent: number
}

/** A finite number as digits × 10^exponent, from its shortest spelling (`-1.25e-7` → -125 × 10^-9). */
function decimalOf (value: number): Decimal {
  const [mantissa = '', power = '0'] = String(value).split('e')
  const [whole = '', fraction = ''] = mantissa.split('.')
  return { digits: BigInt(whole + fraction), exponent: Number(power) - fraction.length }
}

/** Whether `value` is an integer times `divisor`, exactly as both are written in decimal. */
export function isDecimalMultiple (value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false
  const a = decimalOf(value)
  const b = decimalOf(divisor)
  const exponent = Math.min(a.exponent, b.exponent)
  const scaled = (decimal: Decimal): bigint => decimal.digits * 10n ** BigInt(decimal.exponent - exponent)
  return scaled(a) % scaled(b) === 0n
}

/** The part of an Ajv instance this needs (the service's Ajv comes through @fastify/ajv-compiler, untyped). */
interface KeywordAjv {
  removeKeyword (keyword: string): unknown
  addKeyword (definition: { keyword: 'multipleOf', type: 'number', schemaType: 'number', errors: true, validate: (divisor: number, value: number) => boolean }): unknown
}

interface MultipleOfError { keyword: 'multipleOf', message: string, params: { multipleOf: number } }

/** Replaces Ajv's `multipleOf` with the decimal one; its errors read as Ajv's did. */
export function decimalMultipleOf (ajv: KeywordAjv): void {
  ajv.removeKeyword('multipleOf')
  const validate = Object.assign(function multipleOf (divisor: number, value: number): boolean {
    if (isDecimalMultiple(value, divisor)) return true
    validate.errors = [{ keyword: 'multipleOf', message: `must be multiple of ${divisor}`, params: { multipleOf: divisor } }]
    return false
  }, { errors: [] as MultipleOfError[] })
  ajv.addKeyword({ keyword: 'multipleOf', type: 'number', schemaType: 'number', errors: true, validate })
}
