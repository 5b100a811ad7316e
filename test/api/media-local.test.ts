import { mediaFlowSuite } from '../helpers/media-flow'

mediaFlowSuite('local', async () => ({ env: { STORAGE_DRIVER: 'local' }, stop: async () => {} }))
