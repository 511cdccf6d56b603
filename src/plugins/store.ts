/** Makes the Store available as `app.store` and closes it with the app. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Store } from '../store/store.js'

declare module 'fastify' {
  interface FastifyInstance {
    store: Store
  }
}

async function storePlugin (app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  app.decorate('store', store)
  app.addHook('onClose', async function closeStore () {
    await store.close()
  })
}

export default fp(storePlugin, { name: 'resourcery-store' })
