import { imageFlowSuite } from '../helpers/image-flow'

imageFlowSuite('local', async () => ({ env: { STORAGE_DRIVER: 'local' }, stop: async () => {} }))
