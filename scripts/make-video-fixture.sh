#!/usr/bin/env bash
# Makes the committed video fixtures of the player's tests (run once by hand; CI never needs
# ffmpeg): apt-get install ffmpeg, then bash scripts/make-video-fixture.sh.
#
#   tests/fixtures/progressive.webm  40 s, 640x360 VP8 at ~1.6 Mbit/s + Opus, a keyframe every
#       2 s, Cues at the end (as ffmpeg writes them by default, so a player must fetch the tail
#       to seek, as with most real files). ~8 MB: large enough that the engine's first 1 MiB
#       block (before which nothing is stored) is a small part of the file.
#   tests/fixtures/fragmented.mp4    4 s, 320x180 H.264 + AAC, fragmented (one moof per
#       keyframe, mfra index at the end): the player's MP4 parsing tests.
#   tests/fixtures/short.webm        4 s, 320x180 VP9 + Opus: the WebM parsing tests.
#   tests/fixtures/plain-faststart.mp4, plain-moov-end.mp4  4 s, 320x180 VP9 + Opus in plain
#       (non-fragmented) MP4, moov first / at the end: the mp4box remux tests (~180 kB each).
#   tests/fixtures/plain-progressive.mp4  30 s, 480x270 VP9 + Opus, moov at the end (~2.4 MB):
#       the Firefox end-to-end test of the remux.
# Every frame shows a moving test pattern and its own timestamp; the audio beeps once a second.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/fixtures
mkdir -p "$out"
font=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
stamp="drawtext=fontfile=$font:text='%{pts\\:hms}':fontsize=h/8:fontcolor=white:box=1:boxcolor=black@0.6:x=(w-tw)/2:y=h-th-h/12"
beep() { echo "sine=frequency=880:sample_rate=48000:duration=$1,volume='if(lt(mod(t,1),0.1),0.5,0)':eval=frame"; }

ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "testsrc2=size=640x360:rate=25:duration=40,noise=alls=12:allf=t,$stamp" \
  -f lavfi -i "$(beep 40)" \
  -c:v libvpx -deadline good -cpu-used 4 -b:v 1600k -minrate 1600k -maxrate 1600k -g 50 -keyint_min 50 \
  -c:a libopus -b:a 64k -fflags +bitexact -map_metadata -1 \
  "$out/progressive.webm"

ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "testsrc2=size=320x180:rate=25:duration=4,$stamp" \
  -f lavfi -i "$(beep 4)" \
  -c:v libx264 -preset veryfast -profile:v main -pix_fmt yuv420p -g 25 -keyint_min 25 -sc_threshold 0 \
  -c:a aac -b:a 64k -fflags +bitexact -map_metadata -1 \
  -movflags +frag_keyframe+empty_moov+default_base_moof -write_tmcd 0 \
  -f mp4 "$out/fragmented.mp4.tmp"
# mfra (the random-access index) is written by the ismv muxer; remux to get it.
ffmpeg -hide_banner -loglevel error -y -i "$out/fragmented.mp4.tmp" -c copy -fflags +bitexact -map_metadata -1 \
  -movflags +frag_keyframe+empty_moov+default_base_moof -f ismv "$out/fragmented.mp4"
rm -f "$out/fragmented.mp4.tmp"

ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "testsrc2=size=320x180:rate=25:duration=4,$stamp" \
  -f lavfi -i "$(beep 4)" \
  -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 300k -g 25 -keyint_min 25 \
  -c:a libopus -b:a 48k -fflags +bitexact -map_metadata -1 \
  "$out/short.webm"

ls -l "$out"/progressive.webm "$out"/fragmented.mp4 "$out"/short.webm

# Plain (non-fragmented) MP4, VP9 + Opus (Firefox decodes both without system codecs), for the
# mp4box remux: plain-faststart.mp4 has the moov first, plain-moov-end.mp4 after the mdat (as
# ffmpeg writes it by default).
ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "testsrc2=size=320x180:rate=25:duration=4,$stamp" \
  -f lavfi -i "$(beep 4)" \
  -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 300k -g 25 -keyint_min 25 \
  -c:a libopus -b:a 48k -fflags +bitexact -map_metadata -1 -write_tmcd 0 \
  -f mp4 "$out/plain-moov-end.mp4"
ffmpeg -hide_banner -loglevel error -y -i "$out/plain-moov-end.mp4" -c copy -fflags +bitexact -map_metadata -1 \
  -movflags +faststart -write_tmcd 0 -f mp4 "$out/plain-faststart.mp4"

# The Firefox end-to-end test of the remux: 30 s, 480x270 VP9 at 600 kbit/s + Opus, a keyframe
# every 2 s, moov at the end (~2.4 MB: several blocks, so it plays while it downloads).
ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "testsrc2=size=480x270:rate=25:duration=30,noise=alls=12:allf=t,$stamp" \
  -f lavfi -i "$(beep 30)" \
  -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 600k -minrate 600k -maxrate 600k -g 50 -keyint_min 50 \
  -c:a libopus -b:a 48k -fflags +bitexact -map_metadata -1 -write_tmcd 0 \
  -f mp4 "$out/plain-progressive.mp4"

ls -l "$out"/plain-moov-end.mp4 "$out"/plain-faststart.mp4 "$out"/plain-progressive.mp4
