import { imageFlowSuite } from '../helpers/image-flow'
import { startS3Server } from '../helpers/s3'

imageFlowSuite('s3', startS3Server)
