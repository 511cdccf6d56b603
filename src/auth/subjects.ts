/**
 * The subjects of the service's own credentials, which own records as a JWT's
 * `sub` does: `api-key:{id}` for an API key, `client:{clientId}` for a client's
 * token. Only the service's own tokens (HS256) may carry one: an external
 * issuer's subjects are another namespace, and a user whose identity provider
 * let them choose their `sub` would otherwise own, and see, a key's records.
 */
const API_KEY = 'api-key:'
const CLIENT = 'client:'

export const apiKeySubject = (id: number): string => `${API_KEY}${id}`

export const clientSubject = (clientId: string): string => `${CLIENT}${clientId}`

export const namesOwnCredential = (subject: string): boolean => subject.startsWith(API_KEY) || subject.startsWith(CLIENT)
