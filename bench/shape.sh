# shape.sh: sourced by the benchmark scripts.  shape_of MODEL prints the
# input binding (NAME:D0,D1,...) that they all give the model, where
# fetch-models.sh and the export scripts leave a dimension dynamic.
shape_of() {
	case $1 in
	transformer_encoder) echo input:1,128,256 ;;
	ppocrv4_det) echo x:1,3,640,640 ;;
	ppocrv4_rec) echo x:1,3,48,320 ;;
	ppocr_cls) echo x:1,3,48,192 ;;
	lstm_bi2|gru2) echo input:1,64,128 ;;
	gpt_decoder) echo input:1,64,256 ;;
	*) echo input:1,3,224,224 ;;
	esac
}
